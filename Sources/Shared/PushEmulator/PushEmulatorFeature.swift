#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkCrypto
import LinkDaemon
import LinkJSON
import LinkSystem
import WireProtocol

/// phoned's push feature: the PushKit registry ops (`push.*`) and the APNs provider endpoint.
///
/// Command-line options: `--apns-port N` (0, the default, picks a free port),
/// `--apns-host ADDR` (default 127.0.0.1), `--apns-max-connections N`,
/// `--apns-handshake-timeout-ms N`, `--apns-idle-timeout-ms N`.
public final class PushEmulatorFeature: DaemonFeature {
    private var context: FeatureContext?
    private var emulator: PushEmulator?
    /// The endpoints: development (`--apns-port`) and production (`--apns-production-port`).
    private var endpoints: APNsEndpoints?
    private var authority: CertificateAuthority?

    public init() {}

    public var operations: [ControlOperation] {
        [
            callOp(
                "push.register", "PKPushRegistry.desiredPushTypes: register the app for push types and get a token",
                [.required("types", .array, "PushKit types")]
            ) { call, emulator in
                var types: [PushKitType] = []
                for value in try call.args.array("types") {
                    guard let name = value.stringValue, let type = PushKitType(rawValue: name) else {
                        throw call.args.invalid(
                            "'types' holds \(value), not a PushKit type (expected: \(PushKitType.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    types.append(type)
                }
                let result = try emulator.register(types)
                emulator.recipients?.registered(call.clientSerial, types: types)
                return result
            },
            op(
                "push.complete", "the app's PushKit completion handler of a push ran (a VoIP push must have been reported to CallKit)",
                [.required("id", .integer(1...Int64.max), "the push's id in push.received")]
            ) { args, emulator, _ in
                ["terminated": .bool(emulator.recipients?.completed(try args.int("id")) ?? false)]
            },
            op(
                "callKit.reportNewIncomingCall", "CXProvider.reportNewIncomingCall(with:update:completion:): the app reports a call",
                [.required("uuid", .string), .optional("handle", .string), .optional("hasVideo", .bool)]
            ) { args, emulator, _ in
                let uuid = try args.string("uuid")
                guard UUID(uuidString: uuid) != nil else { throw args.invalid("'uuid' must be a UUID, got '\(uuid)'") }
                var result: JSONObject = ["uuid": .string(uuid.uppercased())]
                if emulator.recipients?.callReported(uuid.uppercased()) == false { result["error"] = "callUUIDAlreadyExists" }
                return result
            },
            callOp(
                "fileProvider.attach", "the File Provider extension of a domain runs in this connection's process: it gets the domain's signals",
                [.optional("domain", .string, "the domain's identifier; none: the default domain")]
            ) { call, emulator in
                guard let client = call.clientSerial else { throw ControlError.control(.internalError, "fileProvider.attach needs a connection") }
                let domain = try call.args.optionalString("domain")
                let pending = emulator.signalLog.pending(domain: domain)
                emulator.recipients?.attachedExtension(client, domain: domain, pending: pending.map(\.json))
                return ["domain": domain.map(JSONValue.string) ?? .null, "pending": .int(Int64(pending.count))]
            },
            op("push.token", "the device's push token and registered types") { _, emulator, _ in emulator.tokenResult() },
            op(
                "push.invalidate", "invalidate the token (didInvalidatePushTokenFor); APNs answers 410 for it",
                [.optional("reason", .string, "Unregistered (default) or ExpiredToken")]
            ) { args, emulator, _ in
                let reason = try args.optionalString("reason") ?? APNsReason.unregistered.rawValue
                guard reason == APNsReason.unregistered.rawValue || reason == APNsReason.expiredToken.rawValue else {
                    throw args.invalid("'reason' must be Unregistered or ExpiredToken, got '\(reason)'")
                }
                return try emulator.invalidate(expired: reason == APNsReason.expiredToken.rawValue)
            },
            op(
                "push.config", "the app's ids, its token environment, and the rules a test may change",
                [
                    .optional("bundleId", .string), .optional("teamId", .string),
                    .optional("tokenUpdateIntervalSeconds", .integer(0...86_400)),
                    .optional("environment", .string, "development (default) or production: the environment of the device's tokens"),
                    .optional("lowPriorityDelayMs", .integer(0...86_400_000), "priority 5 and 1 pushes wait (0: they do not)"),
                    .optional("deviceTokenRateLimit", .integer(0...1_000_000), "requests a second to one device token before TooManyRequests (0: no limit)"),
                    .optional("serviceAvailable", .bool, "false: every request is 503 ServiceUnavailable"),
                    .optional("oneStreamUntilAuthenticated", .bool, "false: a new connection may open every stream at once"),
                ]
            ) { [unowned self] args, emulator, _ in
                try self.configure(args, emulator)
            },
            op(
                "push.keys.create", "a new provider signing key (ES256); the private key is returned once",
                [.optional("environment", .string, "development or production: a key restricted to one (default: both)")]
            ) { args, emulator, _ in
                let environment = try Self.environment(args)
                let key = try P256PrivateKey()
                let keyId = Self.newKeyId()
                try Self.addKey(keyId, key.publicKeyPEM, environment: environment, emulator)
                return [
                    "keyId": .string(keyId), "privateKeyPEM": .string(key.pkcs8PEM), "publicKeyPEM": .string(key.publicKeyPEM),
                    "teamId": .string(emulator.state.teamId), "environment": .string(environment?.rawValue ?? "both"),
                ]
            },
            op(
                "push.keys.add", "trust a provider's public key under a key id",
                [
                    .required("keyId", .string), .required("publicKeyPEM", .string),
                    .optional("environment", .string, "development or production (default: both)"),
                ]
            ) { args, emulator, _ in
                let keyId = try args.string("keyId")
                guard keyId.utf8.count == 10, keyId.utf8.allSatisfy({ Self.isKeyIdCharacter($0) }) else {
                    throw args.invalid("'keyId' must be 10 letters or digits, got '\(keyId)'")
                }
                let pem = try args.string("publicKeyPEM")
                do { _ = try P256PublicKey(pem: pem) } catch {
                    throw args.invalid("'publicKeyPEM' is not a P-256 public key PEM: \(error)")
                }
                let environment = try Self.environment(args)
                try Self.addKey(keyId, pem, environment: environment, emulator)
                return ["keyId": .string(keyId), "environment": .string(environment?.rawValue ?? "both")]
            },
            op("push.keys.list", "the trusted provider key ids") { _, emulator, _ in
                let ids = emulator.authenticator.keyIds
                return [
                    "keyIds": .array(ids.map(JSONValue.string)),
                    "keys": .array(
                        ids.map { id in
                            .object(["keyId": .string(id), "environment": .string(emulator.authenticator.environment(ofKey: id)?.rawValue ?? "both")])
                        }),
                ]
            },
            op(
                "push.certificates.create", "a provider TLS client certificate for the app, issued by phoned's CA",
                [
                    .optional("kinds", .array, "the topics it covers: app, voip, complication (default: all three)"),
                    .optional("environment", .string, "development or production (default: both)"),
                    .optional("expired", .bool, "one that has expired already"),
                ]
            ) { [unowned self] args, emulator, _ in
                try self.issueCertificate(args, emulator)
            },
            op(
                "push.network.set", "whether APNs reaches the device; while it does not, APNs stores its pushes",
                [.required("online", .bool)]
            ) { args, emulator, _ in
                try emulator.setOnline(try args.bool("online"))
            },
            op("push.stored", "the pushes APNs stores for the device while it is offline") { _, emulator, _ in
                emulator.storedJSON
            },
            op("push.keys.remove", "stop trusting a provider key", [.required("keyId", .string)]) { args, emulator, _ in
                let keyId = try args.string("keyId")
                guard emulator.authenticator.removeKey(id: keyId) else { throw args.invalid("no key with id '\(keyId)'") }
                emulator.updateState {
                    $0.keys[keyId] = nil; $0.keyEnvironments[keyId] = nil
                }
                try emulator.save()
                return ["keyId": .string(keyId)]
            },
            op("push.endpoint", "where the APNs endpoint listens, and its CA") { [unowned self] _, _, _ in self.endpoint() },
            op(
                "push.signals", "the File Provider signals (of pushes and of the app) and unusable pushes, oldest first, with the extension's answers",
                [.optional("after", .integer(0...Int64.max)), .optional("limit", .integer(1...10_000))]
            ) { args, emulator, _ in
                emulator.signalLog.list(after: try args.optionalInt("after") ?? 0, limit: Int(try args.optionalInt("limit") ?? 1000))
            },
            op(
                "fileProvider.signalEnumerator", "NSFileProviderManager.signalEnumerator(for:): the app signals a container of a domain",
                [.required("containerIdentifier", .string), .optional("domain", .string)]
            ) { args, emulator, _ in
                let identifier = try args.string("containerIdentifier")
                guard !identifier.isEmpty else { throw args.invalid("'containerIdentifier' must not be empty") }
                let signal = FileProviderSignal(containerIdentifier: identifier, domain: try args.optionalString("domain"))
                let record = emulator.signalLog.add(source: .app, apnsId: nil, outcome: .success(signal), payload: [])
                if emulator.hasEventSubscribers() { emulator.publish(record.eventName, record.json) }
                return record.json
            },
            op(
                "fileProvider.complete", "the extension's completion handler for a signal was called, with its error if any",
                [.required("seq", .integer(1...Int64.max)), .optional("error", .object)]
            ) { args, emulator, _ in
                let record = try emulator.signalLog.complete(seq: try args.int("seq"), error: try Self.completionError(args))
                if emulator.hasEventSubscribers() { emulator.publish("fileProvider.signalCompleted", record.completionEvent) }
                return record.json
            },
            op(
                "push.inject", "answer the next pushes with an APNs error",
                [
                    .required("status", .integer(400...599)), .required("reason", .string),
                    .optional("count", .integer(1...1_000_000)),
                ]
            ) { args, emulator, _ in
                let status = try args.int("status")
                let reason = try args.string("reason")
                guard !reason.isEmpty, reason.utf8.count <= 128 else { throw args.invalid("'reason' must be 1 to 128 bytes") }
                let count = try args.optionalInt("count") ?? 1
                emulator.faults.rejection = (Int(status), reason, Int(count))
                return ["status": .int(status), "reason": .string(reason), "count": .int(count)]
            },
            op("push.delay", "delay every APNs answer", [.required("ms", .integer(0...600_000))]) { args, emulator, _ in
                let ms = try args.int("ms")
                emulator.faults.delayMilliseconds = ms
                return ["ms": .int(ms)]
            },
            op(
                "push.goaway", "send GOAWAY on every APNs connection",
                [
                    .optional("errorCode", .integer(0...0xffff_ffff)), .optional("message", .string, "the payload as it is"),
                    .optional("reason", .string, "an APNs reason: the payload is {\"reason\": …}, as APNs sends it (default Shutdown)"),
                ]
            ) { args, _, endpoints in
                let code = try args.optionalInt("errorCode") ?? 0
                if args.contains("message"), args.contains("reason") { throw args.invalid("give 'message' or 'reason', not both") }
                var message = try args.optionalString("message") ?? APNsReason.shutdown.goAwayData
                if let name = try args.optionalString("reason") {
                    guard let reason = APNsReason(rawValue: name) else {
                        throw args.invalid("'reason' must be an APNs reason (Shutdown, IdleTimeout, ...), got '\(name)'")
                    }
                    message = reason.goAwayData
                }
                return ["connections": .int(Int64(endpoints.goAwayAll(errorCode: UInt32(code), message: message)))]
            },
            op("push.reset", "clear injected faults") { _, emulator, _ in
                emulator.faults = PushFaults()
                return [:]
            },
            op("push.stats", "counts of requests and connections (both endpoints)") { _, emulator, endpoints in
                func sum(_ count: (APNsServer) -> Int) -> JSONValue { .int(Int64(endpoints.all.reduce(0) { $0 + count($1) })) }
                return [
                    "requests": .int(Int64(emulator.requestCount)), "accepted": .int(Int64(emulator.acceptedCount)),
                    "rejected": .int(Int64(emulator.rejectedCount)), "connections": sum(\.connectionCount),
                    "acceptedConnections": sum(\.acceptedConnections), "refusedConnections": sum(\.refusedConnections),
                    "evictedConnections": sum(\.evictedConnections), "timedOutConnections": sum(\.timedOutConnections),
                    "protocolErrors": sum(\.protocolErrors), "oversizedHeaderLists": sum(\.oversizedHeaderLists),
                ]
            },
        ]
    }

    /// A phone op answered at once from the running emulator, that needs its call.
    private func callOp(
        _ name: String, _ summary: String, _ arguments: [ControlOperation.Argument] = [],
        _ body: @escaping (OperationCall, PushEmulator) throws -> JSONObject
    ) -> ControlOperation {
        ControlOperation(name, sides: .phone, summary: summary, arguments: arguments) { [unowned self] call in
            guard let emulator = self.emulator else { throw ControlError.control(.internalError, "\(call.op): push is not running") }
            call.succeed(try body(call, emulator))
        }
    }

    /// A phone op answered at once from the running emulator and endpoint.
    private func op(
        _ name: String, _ summary: String, _ arguments: [ControlOperation.Argument] = [],
        _ body: @escaping (Arguments, PushEmulator, APNsEndpoints) throws -> JSONObject
    ) -> ControlOperation {
        ControlOperation(name, sides: .phone, summary: summary, arguments: arguments) { [unowned self] call in
            guard let emulator = self.emulator, let endpoints = self.endpoints else {
                throw ControlError.control(.internalError, "\(call.op): push is not running")
            }
            call.succeed(try body(call.args, emulator, endpoints))
        }
    }

    public var commandLineOptions: [FeatureOption] {
        let defaults = APNsServerLimits()
        return [
            FeatureOption("apns-port", "N", "phoned: APNs development (sandbox) endpoint port (default 0: a free port; see docs/push.md)"),
            FeatureOption("apns-production-port", "N", "phoned: APNs production endpoint port (default 0: a free port)"),
            FeatureOption("apns-host", "ADDR", "phoned: APNs endpoint address (default 127.0.0.1)"),
            FeatureOption("apns-max-connections", "N", "phoned: APNs connections served at once (default \(defaults.maximumConnections))"),
            FeatureOption(
                "apns-handshake-timeout-ms", "N",
                "phoned: time an APNs client has for its TLS and HTTP/2 handshakes (default \(defaults.handshakeTimeoutMilliseconds))"),
            FeatureOption(
                "apns-idle-timeout-ms", "N",
                "phoned: an idle APNs connection is closed after this (default \(defaults.idleTimeoutMilliseconds))"),
            FeatureOption(
                "voip-failure-limit", "N",
                "phoned: VoIP pushes not reported to CallKit before the OS stops delivering them (default \(PushRecipients.standardVoIPFailureLimit))"),
        ]
    }

    public func start(_ context: FeatureContext) throws {
        self.context = context
        let port = try Self.integerOption(context.options, "apns-port", 0...65_535) ?? 0
        let productionPort = try Self.integerOption(context.options, "apns-production-port", 0...65_535) ?? 0
        let host = context.options["apns-host"] ?? "127.0.0.1"
        var limits = APNsServerLimits()
        if let value = try Self.integerOption(context.options, "apns-max-connections", 1...100_000) { limits.maximumConnections = Int(value) }
        if let value = try Self.integerOption(context.options, "apns-handshake-timeout-ms", 1...3_600_000) { limits.handshakeTimeoutMilliseconds = value }
        if let value = try Self.integerOption(context.options, "apns-idle-timeout-ms", 1...86_400_000) { limits.idleTimeoutMilliseconds = value }

        // Its own directory is durable by its own sync, not by another feature's later one.
        let directory = context.stateDirectory + "/push"
        try FileSystem.ensureDurableDirectory(directory)
        let emulator = try PushEmulator(
            statePath: directory + "/state.json", logger: context.logger, publish: context.publish,
            hasEventSubscribers: context.hasEventSubscribers,
            stateWriteFailed: context.stateWriteFailed)
        let voipLimit = try Self.integerOption(context.options, "voip-failure-limit", 1...1_000) ?? Int64(PushRecipients.standardVoIPFailureLimit)
        if let apps = context.apps {
            emulator.recipients = PushRecipients(
                apps: apps, logger: context.logger, voipFailureLimit: Int(voipLimit),
                publish: context.publish, sendEvent: context.sendEvent)
        }
        let authority: CertificateAuthority
        do { authority = try CertificateAuthority.loadOrCreate(directory: directory, logger: context.logger) } catch {
            throw PushStateError("cannot set up the APNs endpoint's certificates in \(directory): \(error)")
        }
        let tlsContext = try authority.makeServerContext()
        var servers: [APNsServer] = []
        for (environment, requested) in [(APNsEnvironment.development, port), (.production, productionPort)] {
            let server = APNsServer(
                loop: context.loop, logger: context.logger, host: host, environment: environment, limits: limits,
                tlsContext: tlsContext
            ) { [unowned self] request, credentials, environment in
                self.serve(request, &credentials, environment)
            }
            do { try server.start(port: UInt16(requested)) } catch {
                for started in servers { started.stop() }
                throw PushStateError("cannot listen for APNs \(environment.rawValue) requests on \(host):\(requested): \(error)")
            }
            server.limitsStreamsUntilAuthenticated = { [unowned emulator] in emulator.state.oneStreamUntilAuthenticated }
            servers.append(server)
        }
        // The device's clock: expirations, low-priority delays and provider tokens follow it.
        emulator.schedule = { [weak loop = context.loop] milliseconds, body in
            _ = loop?.schedule(afterMilliseconds: max(0, milliseconds), body)
        }
        let loop = context.loop
        emulator.wallClock = { loop.wallMilliseconds }
        self.emulator = emulator
        self.authority = authority
        let endpoints = APNsEndpoints(development: servers[0], production: servers[1])
        self.endpoints = endpoints
        context.logger.info(
            "push: APNs endpoints on \(host): development \(endpoints.development.port), production \(endpoints.production.port) (HTTP/2 over TLS and cleartext), CA \(authority.caFile)"
        )
    }

    private static func integerOption(_ options: [String: String], _ name: String, _ range: ClosedRange<Int64>) throws -> Int64? {
        guard let text = options[name] else { return nil }
        guard let value = Int64(text), range.contains(value) else {
            throw PushStateError("--\(name) must be an integer from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    private func serve(_ request: APNsRequest, _ credentials: inout ConnectionCredentials, _ environment: APNsEnvironment) -> APNsAnswer {
        guard let emulator else {
            return APNsAnswer(response: APNsResponse(status: 503, apnsId: APNsResponse.newApnsId(), reason: "ServiceUnavailable"))
        }
        return APNsAnswer(
            response: emulator.handle(request, credentials: &credentials, environment: environment),
            delayMilliseconds: emulator.faults.delayMilliseconds)
    }

    /// phoned stops: "The APNs server is shutting down": every connection gets GOAWAY with
    /// `{"reason":"Shutdown"}`, and a request still arriving is `503 Shutdown`.
    public func stop() {
        emulator?.isShuttingDown = true
        if let endpoints {
            _ = endpoints.goAwayAll(errorCode: 0, message: APNsReason.shutdown.goAwayData)
            for server in endpoints.all { server.stop() }
        }
        endpoints = nil
    }

    public func clientClosed(_ serial: UInt64) {
        emulator?.recipients?.clientClosed(serial)
    }

    public func addStatus(to status: inout JSONObject) {
        guard let emulator else { return }
        var push = endpoint()
        push["token"] = emulator.state.token.map(JSONValue.string) ?? .null
        push["types"] = .array(emulator.state.types.map(JSONValue.string))
        push["connections"] = .int(Int64(endpoints?.all.reduce(0) { $0 + $1.connectionCount } ?? 0))
        push["online"] = .bool(emulator.state.online)
        push["stored"] = .int(Int64(emulator.state.store.pushes.count))
        status["push"] = .object(push)
    }

    /// The development endpoint's address at the top (where clients connected before there
    /// were two), and each environment's.
    private func endpoint() -> JSONObject {
        guard let endpoints, let authority else { return [:] }
        func describe(_ server: APNsServer) -> JSONObject {
            let host = server.host.contains(":") ? "[\(server.host)]" : server.host
            return [
                "port": .int(Int64(server.port)), "url": .string("https://\(host):\(server.port)"),
                "h2cUrl": .string("http://\(host):\(server.port)"), "apnsHost": .string(server.environment.host),
            ]
        }
        var object = describe(endpoints.development)
        object["host"] = .string(endpoints.development.host)
        object["environment"] = "development"
        object["caFile"] = .string(authority.caFile)
        object["serverName"] = "localhost"
        object["environments"] = [
            "development": .object(describe(endpoints.development)),
            "production": .object(describe(endpoints.production)),
        ]
        return object
    }

    private func configure(_ args: Arguments, _ emulator: PushEmulator) throws -> JSONObject {
        if let bundleId = try args.optionalString("bundleId") {
            guard APNsRequestValidator.isTopicSyntax(bundleId) else {
                throw args.invalid("'bundleId' must be a reverse-DNS name of letters, digits, '.', '-' and '_', got '\(bundleId)'")
            }
            emulator.updateState { $0.bundleId = bundleId }
        }
        if let teamId = try args.optionalString("teamId") {
            guard (1...64).contains(teamId.utf8.count), teamId.utf8.allSatisfy({ Self.isKeyIdCharacter($0) }) else {
                throw args.invalid("'teamId' must be 1 to 64 letters or digits (Apple's are 10), got '\(teamId)'")
            }
            emulator.updateState { $0.teamId = teamId }
        }
        if let interval = try args.optionalInt("tokenUpdateIntervalSeconds") {
            emulator.updateState { $0.tokenUpdateIntervalSeconds = interval }
        }
        if args.contains("environment") {
            guard let environment = try Self.environment(args) else { throw args.invalid("'environment' must be development or production") }
            emulator.updateState { $0.environment = environment }
        }
        if let delay = try args.optionalInt("lowPriorityDelayMs") { emulator.updateState { $0.lowPriorityDelayMilliseconds = delay } }
        if let limit = try args.optionalInt("deviceTokenRateLimit") { emulator.updateState { $0.deviceTokenRateLimit = limit } }
        if let available = try args.optionalBool("serviceAvailable") { emulator.updateState { $0.serviceAvailable = available } }
        if let limited = try args.optionalBool("oneStreamUntilAuthenticated") { emulator.updateState { $0.oneStreamUntilAuthenticated = limited } }
        try emulator.save()
        let state = emulator.state
        return [
            "bundleId": .string(state.bundleId), "teamId": .string(state.teamId),
            "tokenUpdateIntervalSeconds": .int(state.tokenUpdateIntervalSeconds),
            "fileProviderTopic": .string(state.bundleId.isEmpty ? "" : state.bundleId + APNsPushType.fileprovider.topicSuffix!),
            "environment": .string(state.environment.rawValue), "lowPriorityDelayMs": .int(state.lowPriorityDelayMilliseconds),
            "deviceTokenRateLimit": .int(state.deviceTokenRateLimit), "serviceAvailable": .bool(state.serviceAvailable),
            "oneStreamUntilAuthenticated": .bool(state.oneStreamUntilAuthenticated),
        ]
    }

    /// An `environment` argument: nil for absent or `both`.
    private static func environment(_ args: Arguments) throws -> APNsEnvironment? {
        guard let name = try args.optionalString("environment"), name != "both" else { return nil }
        guard let environment = APNsEnvironment(name: name) else {
            throw args.invalid("'environment' must be development, production or both, got '\(name)'")
        }
        return environment
    }

    private func issueCertificate(_ args: Arguments, _ emulator: PushEmulator) throws -> JSONObject {
        guard let authority else { throw ControlError.control(.internalError, "push is not running") }
        let bundleId = emulator.state.bundleId
        guard !bundleId.isEmpty else { throw args.invalid("set the app's bundle id first (push.config {\"bundleId\"})") }
        var kinds = ProviderCertificate.kinds.map(\.kind)
        if args.contains("kinds") {
            kinds = try args.array("kinds").map { value in
                guard let kind = value.stringValue, ProviderCertificate.kinds.contains(where: { $0.kind == kind }) else {
                    throw args.invalid("'kinds' holds \(value); a certificate covers app, voip and complication topics (File Provider pushes need tokens)")
                }
                return kind
            }
            guard !kinds.isEmpty else { throw args.invalid("'kinds' must name at least one of app, voip, complication") }
        }
        let environments: Set<APNsEnvironment> = try Self.environment(args).map { [$0] } ?? [.development, .production]
        let expired = try args.optionalBool("expired") ?? false
        let issued = try authority.issueProviderCertificate(
            bundleId: bundleId, teamId: emulator.state.teamId, kinds: kinds,
            environments: environments, validDays: expired ? -1 : 397)
        let topics = kinds.compactMap { kind in ProviderCertificate.kinds.first { $0.kind == kind }.map { bundleId + $0.suffix } }
        return [
            "certificatePEM": .string(issued.certificatePEM), "privateKeyPEM": .string(issued.privateKeyPEM),
            "topics": .array(topics.map(JSONValue.string)),
            "environments": .array(environments.map(\.rawValue).sorted().map(JSONValue.string)),
        ]
    }

    /// The `error` of `fileProvider.complete` as kept: `{"domain", "code", "message"}`.
    private static func completionError(_ args: Arguments) throws -> JSONObject? {
        guard let error = try args.optionalObject("error") else { return nil }
        guard let domain = error["domain"]?.stringValue, !domain.isEmpty, domain.utf8.count <= 256 else {
            throw args.invalid("'error' needs \"domain\": a string of 1 to 256 bytes (e.g. NSFileProviderErrorDomain)")
        }
        guard let code = error["code"]?.intValue else { throw args.invalid("'error' needs \"code\": an integer") }
        let message = error["message"]?.stringValue ?? ""
        guard message.utf8.count <= 4096 else { throw args.invalid("'error' \"message\" must be at most 4096 bytes") }
        return ["domain": .string(domain), "code": .int(code), "message": .string(message)]
    }

    private static func addKey(_ keyId: String, _ pem: String, environment: APNsEnvironment?, _ emulator: PushEmulator) throws {
        emulator.authenticator.addKey(id: keyId, try P256PublicKey(pem: pem), environment: environment)
        emulator.updateState {
            $0.keys[keyId] = pem
            $0.keyEnvironments[keyId] = environment?.rawValue
        }
        try emulator.save()
    }

    static func isKeyIdCharacter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    static func newKeyId() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        return String(decoding: SecureRandom.bytes(10).map { alphabet[Int($0) % alphabet.count] }, as: UTF8.self)
    }
}

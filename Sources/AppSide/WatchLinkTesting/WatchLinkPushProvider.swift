import Foundation
import LinkClient
import LinkJSON

/// A provider server for tests: sends pushes to phoned's APNs endpoint over HTTP/2 and TLS
/// (nghttp2, OpenSSL), trusting only phoned's CA and checking the server's name, with
/// provider tokens from ``APNsProviderTokens``. One connection, kept open and reused, as APNs
/// asks of providers; made again when the endpoint closed it.
///
/// ```swift
/// let provider = try WatchLinkPushProvider.configure(pair.phone)
/// let response = try provider.sendFileProviderChange(container: "NSFileProviderWorkingSetContainerItemIdentifier",
///                                                    domain: "main", to: deviceToken)
/// XCTAssertEqual(response.status, 200)
/// ```
public final class WatchLinkPushProvider: @unchecked Sendable {
    /// APNs' answer to one push.
    public struct Response: Sendable, CustomStringConvertible {
        /// The HTTP status: 200, or the refusal's (400, 403, 410, 413, 429, ...).
        public var status: Int
        /// The `apns-id` header.
        public var apnsId: String?
        /// The refusal's `reason` (`BadDeviceToken`, `Unregistered`, ...).
        public var reason: String?
        /// A 410's `timestamp`: when the token was invalidated, in ms since 1970.
        public var timestamp: Int64?
        /// The body as sent.
        public var body: [UInt8]

        /// `200 (apns-id …)`, `410 Unregistered (apns-id …)`.
        public var description: String { "\(status)\(reason.map { " \($0)" } ?? "") (apns-id \(apnsId ?? "none"))" }
    }

    /// Where the endpoint listens and which CA vouches for it, as `push.endpoint` says.
    public struct Endpoint: Sendable {
        /// The address it listens on (an IP literal).
        public var host: String
        /// The TCP port: `port` of phoned's `push.endpoint` (its development endpoint), or of one of its `environments`.
        public var port: UInt16
        /// The CA certificate (PEM) to trust: phoned's `caFile`.
        public var caFile: String
        /// The name the certificate is checked against (and sent as SNI).
        public var serverName: String

        /// The endpoint at `host`:`port` whose certificate `caFile` vouches for under `serverName`.
        public init(host: String, port: UInt16, caFile: String, serverName: String = "localhost") {
            self.host = host
            self.port = port
            self.caFile = caFile
            self.serverName = serverName
        }
    }

    /// Where the pushes go.
    public let endpoint: Endpoint
    /// The app's bundle id: topics are made from it.
    public let bundleId: String
    /// The provider tokens it sends.
    public let tokens: APNsProviderTokens
    private let timeoutMilliseconds: Int
    private let lock = NSLock()
    private var session: HTTP2ClientSession?
    private var connections = 0
    /// Whether ``session`` has carried no request yet.
    private var isFresh = false

    /// A provider for `endpoint` and the app `bundleId`; each read and write waits at most `timeout` seconds.
    public init(endpoint: Endpoint, bundleId: String, tokens: APNsProviderTokens, timeout: TimeInterval = 10) {
        self.endpoint = endpoint
        self.bundleId = bundleId
        self.tokens = tokens
        timeoutMilliseconds = Int(timeout * 1000)
    }

    /// Sets `phone` up for a provider and returns one: `push.config` with `bundleId` and
    /// `teamId`, a new key from `push.keys.create`, the endpoint from `push.endpoint`.
    public static func configure(
        _ phone: WatchLinkDaemon, bundleId: String = "com.example.files",
        teamId: String = "TEAM123456"
    ) throws -> WatchLinkPushProvider {
        try configure(controlSocketPath: phone.controlPath, bundleId: bundleId, teamId: teamId)
    }

    /// ``configure(_:bundleId:teamId:)`` for the phoned listening at `controlSocketPath`.
    public static func configure(
        controlSocketPath: String, bundleId: String = "com.example.files",
        teamId: String = "TEAM123456"
    ) throws -> WatchLinkPushProvider {
        let client = try ControlClient(socketPath: controlSocketPath, timeoutSeconds: 10)
        defer { client.close() }
        _ = try client.call("push.config", ["bundleId": .string(bundleId), "teamId": .string(teamId)])
        let key = try client.call("push.keys.create")
        let place = try client.call("push.endpoint")
        guard let pem = key["privateKeyPEM"]?.stringValue, let keyId = key["keyId"]?.stringValue,
            let host = place["host"]?.stringValue, let port = place["port"]?.intValue, let caFile = place["caFile"]?.stringValue
        else {
            throw WatchLinkTestingError("phoned's push.keys.create or push.endpoint answer lacks a field: \(key) \(place)")
        }
        let tokens = try APNsProviderTokens(privateKeyPEM: pem, keyId: keyId, teamId: teamId)
        return WatchLinkPushProvider(
            endpoint: Endpoint(
                host: host, port: UInt16(port), caFile: caFile,
                serverName: place["serverName"]?.stringValue ?? "localhost"),
            bundleId: bundleId, tokens: tokens)
    }

    /// How many connections have been made so far (1 while the endpoint keeps the first open).
    public var connectionCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return connections
    }

    /// When the provider tokens it makes are issued: the real time by default. A test whose
    /// phone runs a manual clock gives the phone's time (``WatchLinkPair/clockTime()``), as a
    /// provider's clock agrees with APNs's.
    public var tokenClock: @Sendable () throws -> Date = { Date() }

    /// Sends `POST /3/device/<deviceToken>` with `payload`, `apns-push-type: pushType`, the
    /// topic (by default the bundle id with the push type's suffix, `.pushkit.fileprovider` for
    /// `fileprovider`), the current provider token (issued by ``tokenClock``), and `headers`
    /// (e.g. `apns-id`, `apns-priority`; an `authorization` among them is sent instead of the
    /// provider token).
    public func send(
        _ payload: [UInt8], to deviceToken: String, pushType: String = "fileprovider", topic: String? = nil,
        headers: [(String, String)] = []
    ) throws -> Response {
        let ownToken = headers.contains { $0.0.lowercased() == "authorization" }
        let fields =
            (ownToken ? [] : [("authorization", "bearer " + (try tokens.token(at: try tokenClock())))])
            + [("apns-push-type", pushType), ("apns-topic", topic ?? bundleId + Self.topicSuffix(pushType))] + headers
        lock.lock()
        defer { lock.unlock() }
        let answer: HTTP2ClientSession.Response
        do {
            answer = try openSession().send(method: "POST", path: "/3/device/" + deviceToken, headers: fields, body: payload)
        } catch  where session != nil && !isFresh {
            // A kept connection the endpoint ended meanwhile (idle timeout, GOAWAY): once more on a new one.
            session = nil
            do {
                answer = try openSession().send(method: "POST", path: "/3/device/" + deviceToken, headers: fields, body: payload)
            } catch {
                session = nil
                throw error
            }
        } catch {
            session = nil
            throw error
        }
        isFresh = false
        let body = answer.body.isEmpty ? nil : try? JSON.parse(answer.body)
        return Response(
            status: answer.status, apnsId: answer.header("apns-id"), reason: body?["reason"]?.stringValue,
            timestamp: body?["timestamp"]?.intValue, body: answer.body)
    }

    /// The kept session, or a new connection when there is none or the endpoint ended it.
    private func openSession() throws -> HTTP2ClientSession {
        if let session, session.isUsable { return session }
        session = nil
        let connection = try TLSClientConnection(
            host: endpoint.host, port: endpoint.port, caFile: endpoint.caFile,
            serverName: endpoint.serverName, timeoutMilliseconds: timeoutMilliseconds)
        let opened = try HTTP2ClientSession(connection: connection, authority: "\(endpoint.serverName):\(endpoint.port)")
        session = opened
        isFresh = true
        connections += 1
        return opened
    }

    /// ``send(_:to:pushType:topic:headers:)`` to a token as PushKit's credentials hold it.
    public func send(
        _ payload: [UInt8], to deviceToken: Data, pushType: String = "fileprovider", topic: String? = nil,
        headers: [(String, String)] = []
    ) throws -> Response {
        try send(payload, to: deviceToken.map { String(format: "%02x", $0) }.joined(), pushType: pushType, topic: topic, headers: headers)
    }

    /// A `fileprovider` push that signals `container` (an item identifier,
    /// `NSFileProviderRootContainerItemIdentifier` or
    /// `NSFileProviderWorkingSetContainerItemIdentifier`) of `domain`, as Apple's page writes
    /// its payload: `{"container-identifier", "domain"}`.
    public func sendFileProviderChange(container: String, domain: String?, to deviceToken: String) throws -> Response {
        var payload: JSONObject = ["container-identifier": .string(container)]
        if let domain { payload["domain"] = .string(domain) }
        return try send(Array(JSON.serialize(.object(payload)).utf8), to: deviceToken)
    }

    /// Closes the connection; the next push opens another.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        session = nil
    }

    static func topicSuffix(_ pushType: String) -> String {
        switch pushType {
        case "fileprovider": return ".pushkit.fileprovider"
        case "voip": return ".voip"
        case "complication": return ".complication"
        default: return ""
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkJSON
import LinkSession
import LinkStore
import WireProtocol

/// The control operations: arguments decoded with clear errors, results rendered as JSON.
enum ControlOps {
    static let names: [String] = [
        "status", "session.activate", "app.setState", "device.set", "device.switchWatch", "link.set",
        "message.send", "message.sendData", "message.reply", "replies.set", "received.list",
        "userInfo.transfer", "userInfo.outstanding", "userInfo.cancel", "complication.transfer",
        "context.update", "context.get", "file.transfer", "file.outstanding", "file.cancel",
        "events.subscribe", "shutdown",
    ]

    static func dispatch(_ request: ControlRequest, client: ControlClientConnection, daemon: Daemon) throws {
        let args = Arguments(request.args, op: request.op)
        switch request.op {
        case "status":
            try args.rejectUnknownKeys(allowed: [])
            client.respond(id: request.id, result: daemon.statusResult())

        case "session.activate":
            try args.rejectUnknownKeys(allowed: [])
            daemon.submit(.activate, client: client, request: request)

        case "app.setState":
            try args.rejectUnknownKeys(allowed: ["state"])
            let name = try args.string("state")
            guard let state = AppState(name: name) else {
                throw ControlError.control(.invalidArgument,
                    "app.setState: 'state' must be one of foreground, background, notRunning; got '\(name)'")
            }
            daemon.submit(.setAppState(state), client: client, request: request)

        case "device.set":
            var changes: [DeviceFlagName: Bool] = [:]
            let allowed = DeviceFlagName.owned(by: daemon.role)
            for key in request.args.keys {
                guard let flag = DeviceFlagName(rawValue: key), allowed.contains(flag) else {
                    throw ControlError.control(.invalidArgument,
                        "device.set: '\(key)' is not a flag of the \(daemon.role.name) (expected one of: \(allowed.map(\.rawValue).joined(separator: ", ")))")
                }
                changes[flag] = try args.bool(key)
            }
            guard !changes.isEmpty else {
                throw ControlError.control(.invalidArgument,
                    "device.set: give at least one flag (\(allowed.map(\.rawValue).joined(separator: ", ")))")
            }
            daemon.submit(.setDeviceFlags(changes), client: client, request: request)

        case "device.switchWatch":
            guard daemon.role == .phone else {
                throw ControlError.control(.unknownOp, "device.switchWatch is a phone op: a watch is paired with one phone")
            }
            try args.rejectUnknownKeys(allowed: ["deviceId"])
            let deviceId = try args.string("deviceId")
            guard !deviceId.isEmpty else {
                throw ControlError.control(.invalidArgument,
                    "device.switchWatch: 'deviceId' is empty; give the device id of a paired watch (status: pairedWatches)")
            }
            client.respond(id: request.id, result: try daemon.switchWatch(to: deviceId))

        case "link.set":
            try args.rejectUnknownKeys(allowed: ["up", "latencyMs"])
            let up = try args.optionalBool("up")
            let latency = try args.optionalInt("latencyMs", range: 0...60_000)
            guard up != nil || latency != nil else {
                throw ControlError.control(.invalidArgument, "link.set: give 'up' (bool) and/or 'latencyMs' (0 to 60000)")
            }
            daemon.setLink(up: up, latency: latency)
            client.respond(id: request.id, result: [
                "up": .bool(daemon.linkEnabled), "latencyMs": .int(daemon.linkLatencyMilliseconds),
                "connected": .bool(daemon.session.isLinkUp),
            ])

        case "message.send":
            try args.rejectUnknownKeys(allowed: ["message", "wantsReply", "timeoutMs"])
            let message = try dictionaryPayload(args, key: "message")
            let wantsReply = try args.optionalBool("wantsReply") ?? false
            let timeout = try args.optionalInt("timeoutMs", range: 1...3_600_000)
            daemon.submit(.sendMessage(.dictionary(message), wantsReply: wantsReply, timeoutMilliseconds: timeout),
                          client: client, request: request)

        case "message.sendData":
            try args.rejectUnknownKeys(allowed: ["data", "wantsReply", "timeoutMs"])
            let data = try dataPayload(args, key: "data")
            let wantsReply = try args.optionalBool("wantsReply") ?? false
            let timeout = try args.optionalInt("timeoutMs", range: 1...3_600_000)
            daemon.submit(.sendMessage(.data(data), wantsReply: wantsReply, timeoutMilliseconds: timeout),
                          client: client, request: request)

        case "message.reply":
            try args.rejectUnknownKeys(allowed: ["replyId", "reply", "replyData"])
            let replyId = try args.int("replyId", range: 1...Int64.max)
            let hasReply = args.value("reply") != nil
            let hasData = args.value("replyData") != nil
            guard hasReply != hasData else {
                throw ControlError.control(.invalidArgument, "message.reply: give exactly one of 'reply' (object) or 'replyData' ({\"$data\": base64})")
            }
            let payload: MessagePayload = hasReply
                ? .dictionary(try dictionaryPayload(args, key: "reply"))
                : .data(try dataPayload(args, key: "replyData"))
            daemon.submit(.reply(replyId: UInt64(replyId), payload: payload), client: client, request: request)

        case "replies.set":
            try args.rejectUnknownKeys(allowed: ["mode", "reply", "replyData", "delayMs"])
            let modeName = try args.string("mode")
            guard let mode = ReplyMode(rawValue: modeName) else {
                throw ControlError.control(.invalidArgument,
                    "replies.set: 'mode' must be one of \(ReplyMode.allCases.map(\.rawValue).joined(separator: ", ")); got '\(modeName)'")
            }
            let reply = args.value("reply") != nil ? try dictionaryPayload(args, key: "reply") : nil
            let replyData = args.value("replyData") != nil ? try dataPayload(args, key: "replyData") : nil
            if mode != .fixed, reply != nil || replyData != nil {
                throw ControlError.control(.invalidArgument, "replies.set: 'reply' and 'replyData' go with mode 'fixed'")
            }
            for (key, bytes) in [("reply", reply), ("replyData", replyData)] {
                if let bytes, bytes.count > daemon.session.configuration.maximumMessagePayloadLength {
                    throw SessionError.wc(.payloadTooLarge,
                        "replies.set: '\(key)' is \(bytes.count) bytes; replies are limited to \(daemon.session.configuration.maximumMessagePayloadLength) bytes")
                }
            }
            let delay = try args.optionalInt("delayMs", range: 0...3_600_000) ?? 0
            daemon.submit(.setReplies(ReplyConfiguration(mode: mode, reply: reply, replyData: replyData, delayMilliseconds: delay)),
                          client: client, request: request)

        case "received.list":
            try args.rejectUnknownKeys(allowed: ["after", "limit"])
            let after = UInt64(try args.optionalInt("after", range: 0...Int64.max) ?? 0)
            let limit = Int(try args.optionalInt("limit", range: 1...10_000) ?? 1_000)
            client.respond(id: request.id, result: try daemon.receivedList(after: after, limit: limit))

        case "userInfo.transfer", "complication.transfer":
            try args.rejectUnknownKeys(allowed: ["userInfo"])
            let payload = try dictionaryPayload(args, key: "userInfo")
            daemon.submit(request.op == "userInfo.transfer" ? .transferUserInfo(payload) : .transferComplicationUserInfo(payload),
                          client: client, request: request)

        case "userInfo.outstanding":
            try args.rejectUnknownKeys(allowed: [])
            daemon.submit(.outstandingTransfers, client: client, request: request)

        case "userInfo.cancel":
            try args.rejectUnknownKeys(allowed: ["transferId"])
            daemon.submit(.cancelTransfer(transferId: try args.string("transferId")), client: client, request: request)

        case "context.update":
            try args.rejectUnknownKeys(allowed: ["context"])
            daemon.submit(.updateApplicationContext(try dictionaryPayload(args, key: "context")), client: client, request: request)

        case "context.get":
            try args.rejectUnknownKeys(allowed: [])
            daemon.submit(.applicationContext, client: client, request: request)

        case "events.subscribe":
            try args.rejectUnknownKeys(allowed: [])
            daemon.control.subscribe(client)
            client.respond(id: request.id, result: ["subscribed": true])

        case "shutdown":
            try args.rejectUnknownKeys(allowed: [])
            client.respond(id: request.id, result: ["stopping": true])
            daemon.logger.info("shutdown requested over the control socket")
            daemon.loop.execute { daemon.stop() }

        case let op where op.hasPrefix("file."):
            try FileOps.dispatch(request, args: args, client: client, daemon: daemon)

        case let op where op.hasPrefix("bench."):
            try daemon.bench.handle(request, args: args) { [weak client] result in
                guard let client else { return }
                switch result {
                case .success(let object): client.respond(id: request.id, result: object)
                case .failure(let error): client.respond(id: request.id, error: error)
                }
            }

        default:
            if let feature = daemon.feature(serving: request.op) {
                feature.handle(request) { [weak client] result in
                    guard let client else { return }
                    switch result {
                    case .success(let object): client.respond(id: request.id, result: object)
                    case .failure(let error): client.respond(id: request.id, error: error)
                    }
                }
                return
            }
            let known = names + daemon.features.flatMap(\.operations)
            throw ControlError.control(.unknownOp,
                "unknown op '\(request.op)' (known: \(known.joined(separator: ", ")))")
        }
    }

    // MARK: - Payloads

    /// A property-list dictionary argument, encoded as the link carries it.
    static func dictionaryPayload(_ args: Arguments, key: String) throws -> [UInt8] {
        guard let value = args.value(key) else {
            throw ControlError.control(.invalidArgument, "\(args.op): missing required argument '\(key)'")
        }
        guard case .object = value else {
            throw ControlError.control(.invalidArgument, "\(args.op): '\(key)' must be an object (a property-list dictionary)")
        }
        let dictionary: [String: PropertyListValue]
        do {
            dictionary = try PlistJSON.dictionary(from: value, path: key)
        } catch let error as PlistJSONError {
            throw SessionError.wc(.payloadUnsupportedTypes, "\(args.op): \(error)")
        }
        do {
            return try PropertyListCodec.encode(dictionary)
        } catch {
            throw SessionError.wc(.payloadUnsupportedTypes, "\(args.op): '\(key)' cannot be encoded as a property list: \(error)")
        }
    }

    /// A `{"$data": base64}` argument.
    static func dataPayload(_ args: Arguments, key: String) throws -> [UInt8] {
        guard let value = args.value(key) else {
            throw ControlError.control(.invalidArgument, "\(args.op): missing required argument '\(key)'")
        }
        let plist: PropertyListValue
        do {
            plist = try PlistJSON.propertyList(from: value, path: key)
        } catch {
            throw ControlError.control(.invalidArgument, "\(args.op): '\(key)' must be {\"$data\": \"<base64>\"}: \(error)")
        }
        guard case .data(let bytes) = plist else {
            throw ControlError.control(.invalidArgument, "\(args.op): '\(key)' must be {\"$data\": \"<base64>\"}")
        }
        return bytes
    }

    // MARK: - Rendering

    static func render(_ result: CommandResult, role: Role) -> JSONObject {
        switch result {
        case .empty:
            return [:]
        case .activationState(let state):
            return ["activationState": .string(state.name)]
        case .appState(let state):
            return ["appState": .string(state.name)]
        case .deviceFlags(let flags):
            var object: JSONObject = [:]
            for name in DeviceFlagName.owned(by: role) {
                object[name.rawValue] = .bool(flags.contains(name.flag))
            }
            return object
        case .reply(let content):
            switch content {
            case .dictionary(let dictionary): return ["reply": PlistJSON.json(from: dictionary)]
            case .data(let bytes): return ["replyData": PlistJSON.json(from: .data(bytes))]
            }
        case .received(let items):
            return ["items": .array(items.map { .object(render($0)) })]
        case .transfer(let transferId, let remaining):
            var object: JSONObject = ["transferId": .string(transferId)]
            if let remaining { object["remaining"] = .int(Int64(remaining)) }
            return object
        case .cancelled(let cancelled):
            return ["cancelled": .bool(cancelled)]
        case .outstanding(let transfers):
            return ["transfers": .array(transfers.map { transfer in
                .object([
                    "transferId": .string(transfer.transferId),
                    "userInfo": dictionaryJSON(transfer.payload),
                    "isTransferring": .bool(transfer.isTransferring),
                    "isCurrentComplicationInfo": .bool(transfer.isCurrentComplicationInfo),
                ])
            })]
        case .contextUpdated:
            return [:]
        case .contexts(let application, let received):
            return ["applicationContext": dictionaryJSON(application),
                    "receivedApplicationContext": dictionaryJSON(received)]
        case .outstandingFiles(let transfers):
            return FileOps.render(transfers)
        case .replies(let configuration):
            var object: JSONObject = ["mode": .string(configuration.mode.rawValue),
                                      "delayMs": .int(configuration.delayMilliseconds)]
            if let reply = configuration.reply, let dictionary = try? PropertyListCodec.decodeDictionary(reply) {
                object["reply"] = PlistJSON.json(from: dictionary)
            }
            if let data = configuration.replyData { object["replyData"] = PlistJSON.json(from: .data(data)) }
            return object
        }
    }

    static func render(_ item: ReceivedItem) -> JSONObject {
        var object: JSONObject = ["seq": .int(Int64(item.seq)), "kind": .string(item.kind.rawValue)]
        switch item.content {
        case .dictionary(let dictionary): object["message"] = PlistJSON.json(from: dictionary)
        case .data(let bytes): object["data"] = PlistJSON.json(from: .data(bytes))
        }
        if let replyId = item.replyId { object["replyId"] = .int(Int64(replyId)) }
        return object
    }

    /// A received queued item as `received.list` shows it.
    static func render(_ item: InboxItem) -> JSONObject {
        switch item.channel {
        case .userInfo:
            return ["seq": .int(Int64(item.seq)), "kind": "userInfo", "userInfo": dictionaryJSON(item.payload),
                    "isCurrentComplicationInfo": .bool(item.flags.contains(.currentComplication))]
        case .applicationContext:
            return ["seq": .int(Int64(item.seq)), "kind": "applicationContext",
                    "applicationContext": dictionaryJSON(item.payload)]
        case .file:
            return FileOps.render(item)
        }
    }

    /// An encoded dictionary as JSON (`{}` for none).
    static func dictionaryJSON(_ bytes: [UInt8]?) -> JSONValue {
        guard let bytes, let dictionary = try? PropertyListCodec.decodeDictionary(bytes) else { return .object([:]) }
        return PlistJSON.json(from: dictionary)
    }

    static func render(_ notification: SessionNotification) -> (String, JSONObject) {
        switch notification {
        case .activationDidComplete(let state):
            return ("session.activationDidComplete", ["activationState": .string(state.name)])
        case .didBecomeInactive:
            return ("session.didBecomeInactive", ["activationState": .string(ActivationState.inactive.name)])
        case .didDeactivate:
            return ("session.didDeactivate", ["activationState": .string(ActivationState.notActivated.name)])
        case .reachabilityDidChange(let reachable):
            return ("session.reachabilityDidChange", ["isReachable": .bool(reachable)])
        case .watchStateDidChange(let flags):
            return ("session.watchStateDidChange", [
                "isPaired": .bool(flags.contains(.isPaired)),
                "isWatchAppInstalled": .bool(flags.contains(.isWatchAppInstalled)),
                "isComplicationEnabled": .bool(flags.contains(.isComplicationEnabled)),
            ])
        case .companionAppInstalledDidChange(let installed):
            return ("session.companionAppInstalledDidChange", ["isCompanionAppInstalled": .bool(installed)])
        case .appStateDidChange(let state):
            return ("app.stateDidChange", ["appState": .string(state.name)])
        case .messageReceived(let item):
            return ("message.received", render(item))
        case .userInfoReceived(let seq, let userInfo, let isCurrent):
            return ("userInfo.received", ["seq": .int(Int64(seq)), "userInfo": dictionaryJSON(userInfo),
                                          "isCurrentComplicationInfo": .bool(isCurrent)])
        case .userInfoDidFinish(let transferId, let error):
            var data: JSONObject = ["transferId": .string(transferId)]
            if let error { data["error"] = controlError(error).json }
            return ("userInfo.didFinish", data)
        case .systemMessageReceived(let replyId, let content):
            var data: JSONObject = ["kind": .string(content.isData ? "messageData" : "message")]
            if let replyId { data["replyId"] = .int(Int64(replyId)) }
            return ("system.messageReceived", data)
        case .systemUserInfoReceived(let seq, _):
            return ("system.userInfoReceived", ["seq": .int(Int64(seq))])
        case .applicationContextReceived(let seq, let context):
            return ("context.received", ["seq": .int(Int64(seq)), "applicationContext": dictionaryJSON(context)])
        case .file(let notification):
            return FileOps.render(notification)
        }
    }

    static func controlError(_ error: SessionError) -> ControlError {
        switch error {
        case .wc(let code, let message):
            return ControlError(domain: WCErrorCode.domain, code: code.rawValue, name: code.name, message: message)
        case .invalidArgument(let message):
            return .control(.invalidArgument, message)
        }
    }
}

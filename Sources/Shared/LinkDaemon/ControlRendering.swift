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

/// How session results, received items and notifications look in control answers and events.
enum ControlRendering {
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
            // Every answered message.send: one member (a flat reply written with it as one text).
            case .dictionary(let dictionary):
                return PlistJSON.jsonObject(member: "reply", fromEncodedDictionary: dictionary.encoded)
                    ?? JSONObject(member: "reply", .object([:]))
            case .data(let bytes): return JSONObject(member: "replyData", PlistJSON.json(from: .data(bytes)))
            }
        case .received(let items):
            return ["items": .array(items.map { .object(render($0)) })]
        case .transfer(let transferId, let remaining):
            var object: JSONObject = ["transferId": .string(transferId)]
            if let remaining { object["remaining"] = .int(Int64(remaining)) }
            return object
        case .cancelled(let cancelled):
            return ["cancelled": .bool(cancelled)]
        case .timedOut(let timedOut):
            return ["timedOut": .bool(timedOut)]
        case .outstanding(let transfers):
            return [
                "transfers": .array(
                    transfers.map { transfer in
                        .object([
                            "transferId": .string(transfer.transferId),
                            "userInfo": dictionaryJSON(transfer.payload),
                            "isTransferring": .bool(transfer.isTransferring),
                            "isCurrentComplicationInfo": .bool(transfer.isCurrentComplicationInfo),
                        ])
                    })
            ]
        case .contextUpdated:
            return [:]
        case .contexts(let application, let received):
            return [
                "applicationContext": dictionaryJSON(application),
                "receivedApplicationContext": dictionaryJSON(received),
            ]
        case .outstandingFiles(let transfers):
            return render(transfers)
        case .replies(let configuration):
            var object: JSONObject = [
                "mode": .string(configuration.mode.rawValue),
                "delayMs": .int(configuration.delayMilliseconds),
            ]
            if let reply = configuration.reply, let dictionary = try? PropertyListCodec.decodeDictionary(reply) {
                object["reply"] = PlistJSON.json(from: dictionary)
            }
            if let data = configuration.replyData { object["replyData"] = PlistJSON.json(from: .data(data)) }
            return object
        case .taskScheduled(let delay):
            return ["inMs": .int(delay)]
        }
    }

    static func render(_ item: ReceivedItem) -> JSONObject {
        var object: JSONObject = ["seq": .int(Int64(item.seq)), "kind": .string(item.kind.rawValue)]
        switch item.content {
        case .dictionary(let dictionary): object["message"] = dictionaryJSON(dictionary.encoded)
        case .data(let bytes): object["data"] = PlistJSON.json(from: .data(bytes))
        }
        if let replyId = item.replyId { object["replyId"] = .int(Int64(replyId)) }
        return object
    }

    /// A received queued item as `received.list` shows it.
    static func render(_ item: InboxItem) -> JSONObject {
        switch item.channel {
        case .userInfo:
            return [
                "seq": .int(Int64(item.seq)), "kind": "userInfo", "userInfo": dictionaryJSON(item.payload),
                "isCurrentComplicationInfo": .bool(item.flags.contains(.currentComplication)),
            ]
        case .applicationContext:
            return [
                "seq": .int(Int64(item.seq)), "kind": "applicationContext",
                "applicationContext": dictionaryJSON(item.payload),
            ]
        case .file:
            return renderFile(item)
        }
    }

    /// An encoded dictionary as JSON (`{}` for none).
    static func dictionaryJSON(_ bytes: [UInt8]?) -> JSONValue {
        guard let bytes, let json = PlistJSON.json(fromEncodedDictionary: bytes) else { return .object([:]) }
        return json
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
            return (
                "session.watchStateDidChange",
                [
                    "isPaired": .bool(flags.contains(.isPaired)),
                    "isWatchAppInstalled": .bool(flags.contains(.isWatchAppInstalled)),
                    "isComplicationEnabled": .bool(flags.contains(.isComplicationEnabled)),
                ]
            )
        case .companionAppInstalledDidChange(let installed):
            return ("session.companionAppInstalledDidChange", ["isCompanionAppInstalled": .bool(installed)])
        case .appStateDidChange(let state):
            return ("app.stateDidChange", ["appState": .string(state.name)])
        case .workoutStateDidChange(let running):
            return ("workout.stateDidChange", ["running": .bool(running)])
        case .messageReceived(let item):
            return ("message.received", render(item))
        case .userInfoReceived(let seq, let userInfo, let isCurrent):
            return (
                "userInfo.received",
                [
                    "seq": .int(Int64(seq)), "userInfo": dictionaryJSON(userInfo),
                    "isCurrentComplicationInfo": .bool(isCurrent),
                ]
            )
        case .userInfoDidFinish(let transferId, let error, let earlier):
            var data: JSONObject = ["transferId": .string(transferId)]
            if let error { data["error"] = error.controlError.json }
            if let earlier {
                data["userInfo"] = dictionaryJSON(earlier.payload)
                data["isCurrentComplicationInfo"] = .bool(earlier.isCurrentComplicationInfo)
                if let seq = earlier.seq { data["seq"] = .int(Int64(clamping: seq)) }
            }
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
            return render(notification)
        case .backgroundTask(let notification):
            return render(notification)
        case .weather(let notification):
            return render(notification)
        }
    }

    /// What the weather did; each with the seed that replays it.
    static func render(_ notification: WeatherNotification) -> (String, JSONObject) {
        switch notification {
        case .spellBegan(let kind, let duration, let seed):
            return (
                "weather.spellBegan",
                ["spell": .string(kind.rawValue), "durationMilliseconds": .int(duration), "seed": .int(Int64(clamping: seed))]
            )
        case .spellEnded(let kind, let seed):
            return ("weather.spellEnded", ["spell": .string(kind.rawValue), "seed": .int(Int64(clamping: seed))])
        case .reportDelayed(let reachable, let lag, let seed):
            return (
                "weather.reportDelayed",
                ["isReachable": .bool(reachable), "lagMilliseconds": .int(lag), "seed": .int(Int64(clamping: seed))]
            )
        case .reportMissed(let reachable, let seed):
            return ("weather.reportMissed", ["isReachable": .bool(reachable), "seed": .int(Int64(clamping: seed))])
        }
    }

    /// The weather for `status` and `weather.set`.
    static func render(_ weather: WeatherStatus) -> JSONObject {
        var object: JSONObject = [
            "profile": .string(weather.profile.rawValue), "seed": .int(Int64(clamping: weather.seed)),
            "isReachableInFact": .bool(weather.isReachableInFact),
        ]
        object["spell"] = weather.spell.map { .string($0.rawValue) } ?? .null
        if let pending = weather.pendingReport {
            object["pendingReport"] = .object(["isReachable": .bool(pending.isReachable), "inMilliseconds": .int(pending.inMilliseconds)])
        }
        return object
    }

    /// A background task event; `withUserInfo: false` leaves the tasks' userInfo out (the trace
    /// keeps no payloads).
    static func render(_ notification: BackgroundTaskNotification, withUserInfo: Bool = true) -> (String, JSONObject) {
        let render = { (task: BackgroundTask) in Self.render(task, withUserInfo: withUserInfo) }
        switch notification {
        case .handed(let tasks):
            return ("backgroundTask.handed", ["tasks": .array(tasks.map { .object(render($0)) })])
        case .expiring(let tasks):
            return ("backgroundTask.expiring", ["tasks": .array(tasks.map { .object(render($0)) })])
        case .completed(let task):
            return ("backgroundTask.completed", render(task))
        case .expired(let task):
            return ("backgroundTask.expired", render(task))
        case .ignored(let task):
            return ("backgroundTask.ignored", render(task))
        case .wakeScheduled(let reason, let delay):
            return ("app.wakeScheduled", ["reason": .string(reason.rawValue), "inMs": .int(delay)])
        case .suspended:
            return ("app.suspended", [:])
        case .resumed(let reason):
            return ("app.resumed", ["reason": .string(reason.rawValue)])
        }
    }

    /// A background task as events and `status` show it.
    static func render(_ task: BackgroundTask, withUserInfo: Bool = true) -> JSONObject {
        var object: JSONObject = [
            "taskId": .int(Int64(clamping: task.id)), "kind": .string(task.kind.rawValue),
            "state": .string(task.state.rawValue),
        ]
        if withUserInfo, let userInfo = task.userInfo, let value = try? JSON.parse(userInfo) { object["userInfo"] = value }
        return object
    }

    /// `status.backgroundTasks` (watch).
    static func render(_ status: BackgroundTaskStatus) -> JSONObject {
        var object: JSONObject = [
            "policy": .string(status.policy.rawValue), "seed": .int(Int64(clamping: status.seed)),
            "windowMs": .int(status.windowMilliseconds), "budgetMs": .int(status.budgetMilliseconds),
            "suspended": .bool(status.isSuspended), "tasks": .array(status.tasks.map { .object(render($0)) }),
            "scheduled": .array(status.scheduled.map { .object(["kind": .string($0.kind.rawValue), "inMs": .int($0.inMilliseconds)]) }),
            "launchesThisHour": .int(Int64(status.launchesThisHour)),
        ]
        if status.policy == .watch { object["launchesPerHour"] = .int(Int64(status.launchesPerHour)) }
        if let left = status.budgetLeftMilliseconds { object["budgetLeftMs"] = .int(left) }
        if let next = status.nextWakeInMilliseconds { object["nextWakeInMs"] = .int(next) }
        return object
    }

    static func render(_ transfers: [OutstandingFileTransfer]) -> JSONObject {
        [
            "transfers": .array(
                transfers.map { transfer in
                    .object([
                        "transferId": .string(transfer.transferId),
                        "path": .string(transfer.path),
                        "metadata": dictionaryJSON(transfer.metadata),
                        "totalBytes": .int(Int64(clamping: transfer.totalBytes)),
                        "completedBytes": .int(Int64(clamping: transfer.completedBytes)),
                        "isTransferring": .bool(transfer.isTransferring),
                    ])
                })
        ]
    }

    /// A received file as `received.list` and `file.received` show it.
    static func render(_ file: ReceivedFile) -> JSONObject {
        [
            "seq": .int(Int64(file.seq)), "kind": "file", "transferId": .string(file.transferId), "path": .string(file.path),
            "metadata": dictionaryJSON(file.metadata), "totalBytes": .int(Int64(clamping: file.totalBytes)),
        ]
    }

    /// A received file's inbox row as `received.list` shows it.
    static func renderFile(_ item: InboxItem) -> JSONObject {
        guard let file = ReceivedFile(seq: item.seq, payload: item.payload) else {
            return ["seq": .int(Int64(item.seq)), "kind": "file"]
        }
        return render(file)
    }

    static func render(_ notification: FileNotification) -> (String, JSONObject) {
        switch notification {
        case .progress(let transferId, let completed, let total):
            return (
                "file.progress",
                [
                    "transferId": .string(transferId), "completedBytes": .int(Int64(clamping: completed)),
                    "totalBytes": .int(Int64(clamping: total)),
                ]
            )
        case .didFinish(let transferId, let error, let earlier):
            var data: JSONObject = ["transferId": .string(transferId)]
            if let error { data["error"] = error.controlError.json }
            if let earlier, let file = earlier.file {
                data["file"] = .object([
                    "path": .string(file.path), "name": .string(file.name), "metadata": dictionaryJSON(earlier.payload),
                    "totalBytes": .int(Int64(clamping: file.totalBytes)),
                ])
                if let seq = earlier.seq { data["seq"] = .int(Int64(clamping: seq)) }
            }
            return ("file.didFinish", data)
        case .received(let file):
            return ("file.received", render(file))
        case .problem(let text):
            return ("file.problem", ["message": .string(text)])
        }
    }
}

import CallKit
import FileProvider
import Foundation
import HealthKit
import PushKit
@_spi(Testing) import WatchConnectivity

// An app process for the app-side tests, written only against the WatchConnectivity API as
// Apple documents it: it reads commands from standard input (one JSON object a line) and
// writes every delegate callback and handler call to standard output (one JSON object a
// line, flushed), so a test can drive it and see what its delegate saw, in order. The one
// call outside Apple's API is the testing hook that moves the app to the background and back
// (`setApplicationState`), which a device's app lifecycle does.
//
//   --no-reply-handler   a delegate without session(_:didReceiveMessage:replyHandler:)
//
// Commands include "observe": key-value observations of hasContentPending and activationState,
// each change a "kvo" line; "stopObserving" invalidates them; "startWorkout" and "endWorkout": a
// HealthKit workout session, each change a "workoutState" line.
//   --work-ms N          each didReceiveUserInfo works N ms before it returns
//
// Launched by a daemon (app.install), with no commands on standard input:
//   --activate-after-ms N  activates the session N ms after launch
//   --crash-at-start       exits with status 3 at once, as an app that crashes at launch
//   --push-types T,...     registers for PushKit pushes (voIP, fileProvider, complication)
//   --report-calls         reports each VoIP push to CallKit before its completion handler runs
//   --file-provider DOMAIN the File Provider extension of DOMAIN ("default": the default domain)
//   --signal-error CODE    the extension completes each signal with NSFileProviderError(CODE)

func option(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[index + 1]
}

let workMicroseconds: UInt32 = {
    guard let index = CommandLine.arguments.firstIndex(of: "--work-ms"), index + 1 < CommandLine.arguments.count,
        let milliseconds = UInt32(CommandLine.arguments[index + 1])
    else { return 0 }
    return milliseconds * 1_000
}()

func emit(_ object: [String: Any]) {
    let clean = jsonSafe(object)
    guard let data = try? JSONSerialization.data(withJSONObject: clean, options: [.sortedKeys]) else { return }
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

/// Property-list values as JSON: Data as {"$data": base64}, Date as {"$date": seconds}.
func jsonSafe(_ value: Any) -> Any {
    switch value {
    case let data as Data: return ["$data": data.base64EncodedString()]
    case let date as Date: return ["$date": date.timeIntervalSince1970]
    case let dictionary as [String: Any]: return dictionary.mapValues(jsonSafe)
    case let array as [Any]: return array.map(jsonSafe)
    default: return value
    }
}

/// A line for an error: its code and, as Foundation's NSError gives them, its texts.
func errorLine(_ callback: String, _ error: Error) -> [String: Any] {
    let bridged = error as NSError
    return [
        "cb": callback, "code": bridged.code, "domain": bridged.domain, "description": bridged.localizedDescription,
        "reason": bridged.localizedFailureReason ?? NSNull(), "suggestion": bridged.localizedRecoverySuggestion ?? NSNull(),
        "explanation": bridged.userInfo["WatchLinkExplanation"] ?? NSNull(),
    ]
}

func errorCode(_ error: Error?) -> Any {
    guard let error else { return NSNull() }
    return (error as NSError).code
}

/// The delegate methods both probes have. The conformance is declared by each subclass, so
/// that the one with a reply handler has it as its witness (a protocol's default
/// implementation would otherwise win for the base class and its subclasses alike).
class ProbeDelegate: NSObject {
    /// Set from the command loop, read on the delegate queue.
    private let lock = NSLock()
    private var replySetting: (reply: [String: Any], delay: Double) = (["ok": true], 0)
    var reply: (reply: [String: Any], delay: Double) {
        get { lock.withLock { replySetting } }
        set { lock.withLock { replySetting = newValue } }
    }

    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        emit([
            "cb": "activationDidComplete", "state": activationState.rawValue, "error": errorCode(error),
            "isReachable": session.isReachable, "hasContentPending": session.hasContentPending,
        ])
    }
    func sessionDidBecomeInactive(_ session: WCSession) { emit(["cb": "didBecomeInactive"]) }
    func sessionDidDeactivate(_ session: WCSession) { emit(["cb": "didDeactivate"]) }
    func sessionReachabilityDidChange(_ session: WCSession) { emit(["cb": "reachabilityDidChange", "isReachable": session.isReachable]) }
    func sessionWatchStateDidChange(_ session: WCSession) {
        emit([
            "cb": "watchStateDidChange", "isPaired": session.isPaired, "isWatchAppInstalled": session.isWatchAppInstalled,
            "isComplicationEnabled": session.isComplicationEnabled,
        ])
    }
    func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        emit(["cb": "didReceiveMessage", "message": message])
    }
    func session(_ session: WCSession, didReceiveMessageData messageData: Data) {
        emit(["cb": "didReceiveMessageData", "data": messageData])
    }
    func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        emit(["cb": "didReceiveMessageDataWithReply", "data": messageData])
        replyHandler(Data(messageData.reversed()))
    }
    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        emit(["cb": "didReceiveApplicationContext", "context": applicationContext])
    }
    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        emit(["cb": "didReceiveUserInfo", "userInfo": userInfo])
        if workMicroseconds > 0 { usleep(workMicroseconds) }  // the app's work on the item
    }
    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: Error?) {
        var line: [String: Any] = [
            "cb": "didFinishUserInfo", "userInfo": userInfoTransfer.userInfo, "error": errorCode(error),
            "isCurrentComplicationInfo": userInfoTransfer.isCurrentComplicationInfo,
            "isTransferring": userInfoTransfer.isTransferring,
        ]
        if let error { line["errorTexts"] = errorLine("error", error) }
        emit(line)
    }
    func session(_ session: WCSession, didReceive file: WCSessionFile) {
        let size = (try? FileManager.default.attributesOfItem(atPath: file.fileURL.path)[.size] as? Int) ?? -1
        emit(["cb": "didReceiveFile", "name": file.fileURL.lastPathComponent, "size": size, "metadata": file.metadata ?? [:]])
    }
    func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: Error?) {
        var line: [String: Any] = [
            "cb": "didFinishFile", "name": fileTransfer.file.fileURL.lastPathComponent, "error": errorCode(error),
            "completed": fileTransfer.progress.completedUnitCount, "total": fileTransfer.progress.totalUnitCount,
            "metadata": fileTransfer.file.metadata ?? [:], "isTransferring": fileTransfer.isTransferring,
        ]
        if let error { line["errorTexts"] = errorLine("error", error) }
        emit(line)
    }
}

/// Without a reply handler.
final class PlainDelegate: ProbeDelegate, WCSessionDelegate {}

/// With a reply handler: answers with `reply`.
final class ReplyingDelegate: ProbeDelegate, WCSessionDelegate {
    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        emit(["cb": "didReceiveMessageWithReply", "message": message])
        let (reply, replyDelay) = self.reply
        if replyDelay > 0 {
            // Apple's reply handler is not Sendable; the probe answers it once, later.
            let late = UncheckedBox { replyHandler(reply) }
            DispatchQueue.global().asyncAfter(deadline: .now() + replyDelay) { late.value() }
        } else {
            replyHandler(reply)
        }
    }
}

let delegate: ProbeDelegate & WCSessionDelegate = CommandLine.arguments.contains("--no-reply-handler") ? PlainDelegate() : ReplyingDelegate()
var lastFileTransfer: WCSessionFileTransfer?
/// The session's observations (`observe`), kept while the app runs.
var observations: [NSKeyValueObservation] = []
/// The workout session (`startWorkout`), and its delegate: each change a line.
var workout: HKWorkoutSession?
final class WorkoutProbe: NSObject, HKWorkoutSessionDelegate {
    func workoutSession(_ workoutSession: HKWorkoutSession, didChangeTo toState: HKWorkoutSessionState, from fromState: HKWorkoutSessionState, date: Date) {
        emit(["cb": "workoutState", "state": toState.rawValue, "from": fromState.rawValue])
    }
    func workoutSession(_ workoutSession: HKWorkoutSession, didFailWithError error: Error) {
        emit(["cb": "workoutFailed", "error": "\(error)"])
    }
}
let workoutProbe = WorkoutProbe()

/// Carries a value to a queue that calls it once; the probe knows it is not shared.
final class UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

@MainActor
func run(_ command: [String: Any]) {
    let session = WCSession.default
    switch command["cmd"] as? String ?? "" {
    case "activate":
        session.delegate = delegate
        session.activate()
    case "sendMessage":
        let message = command["message"] as? [String: Any] ?? [:]
        if command["wantsReply"] as? Bool == true {
            session.sendMessage(
                message, replyHandler: { emit(["cb": "replyHandler", "reply": $0]) },
                errorHandler: { emit(errorLine("errorHandler", $0)) })
        } else {
            session.sendMessage(message, replyHandler: nil, errorHandler: { emit(errorLine("errorHandler", $0)) })
        }
    case "sendMessageData":
        let data = Data(base64Encoded: command["data"] as? String ?? "") ?? Data()
        session.sendMessageData(
            data, replyHandler: { emit(["cb": "replyDataHandler", "data": $0]) },
            errorHandler: { emit(errorLine("errorHandler", $0)) })
    case "updateApplicationContext":
        do {
            try session.updateApplicationContext(command["context"] as? [String: Any] ?? [:])
            emit(["cb": "contextUpdated"])
        } catch {
            emit(errorLine("contextError", error))
        }
    case "transferUserInfo":
        _ = session.transferUserInfo(command["userInfo"] as? [String: Any] ?? [:])
    case "transferUserInfos":
        for n in 0..<(command["count"] as? Int ?? 0) { _ = session.transferUserInfo(["n": n]) }
        emit(["cb": "queued", "outstanding": session.outstandingUserInfoTransfers.count])
    case "transferCurrentComplicationUserInfo":
        let transfer = session.transferCurrentComplicationUserInfo(command["userInfo"] as? [String: Any] ?? [:])
        emit(["cb": "complicationQueued", "isCurrentComplicationInfo": transfer.isCurrentComplicationInfo])
    case "transferFile":
        lastFileTransfer = session.transferFile(
            URL(fileURLWithPath: command["path"] as? String ?? ""),
            metadata: command["metadata"] as? [String: Any])
    case "cancelFile":
        lastFileTransfer?.cancel()
        emit(["cb": "cancelled", "outstanding": session.outstandingFileTransfers.count])
    case "setReply":
        delegate.reply = (command["reply"] as? [String: Any] ?? [:], command["delaySeconds"] as? Double ?? 0)
        emit(["cb": "replySet"])
    case "status":
        emit([
            "cb": "status", "activationState": session.activationState.rawValue, "isReachable": session.isReachable,
            "hasContentPending": session.hasContentPending,
            "remainingComplicationUserInfoTransfers": session.remainingComplicationUserInfoTransfers,
            "applicationContext": session.applicationContext, "receivedApplicationContext": session.receivedApplicationContext,
            "outstandingUserInfoTransfers": session.outstandingUserInfoTransfers.count,
        ])
    case "observe":
        // Key-value observing as apps do it: each change a line, with its old and new value.
        observations.append(
            session.observe(\.hasContentPending, options: [.initial, .old, .new]) { session, change in
                emit([
                    "cb": "kvo", "key": "hasContentPending", "old": change.oldValue ?? NSNull(), "new": change.newValue ?? NSNull(),
                    "value": session.hasContentPending,
                ])
            })
        observations.append(
            session.observe(\.activationState, options: [.new]) { _, change in
                emit(["cb": "kvo", "key": "activationState", "new": change.newValue?.rawValue ?? NSNull()])
            })
        emit(["cb": "observing"])
    case "startWorkout":
        let configuration = HKWorkoutConfiguration()
        configuration.activityType = .running
        configuration.locationType = .outdoor
        do {
            let session = try HKWorkoutSession(healthStore: HKHealthStore(), configuration: configuration)
            session.delegate = workoutProbe
            workout = session
            session.startActivity(with: Date())
        } catch {
            emit(["cb": "workoutFailed", "error": "\(error)"])
        }
    case "endWorkout":
        workout?.end()
    case "stopObserving":
        for observation in observations { observation.invalidate() }
        emit(["cb": "notObserving"])
    case "dropDelegate":
        session.delegate = nil
        emit(["cb": "delegateDropped"])
    case "watchDirectory":
        // `watchDirectoryURL`, and (`write`) a file written into it.
        let url = session.watchDirectoryURL
        if let url, let name = command["write"] as? String {
            FileManager.default.createFile(atPath: url.appendingPathComponent(name).path, contents: Data("kept".utf8))
        }
        let files = url.flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0.path) } ?? []
        emit(["cb": "watchDirectory", "path": url?.path ?? NSNull(), "files": files.sorted()])
    case "appState":
        emit(["cb": "appState", "changed": session.setApplicationState(command["state"] as? String ?? "")])
    case "exit":
        exit(0)
    default:
        emit(["cb": "unknownCommand", "command": command])
    }
}

/// PushKit as the app delegate of Apple's pages registers it; each push and token is a line.
final class PushProbe: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
    let registry = PKPushRegistry(queue: DispatchQueue(label: "probe.pushkit"))
    let provider = CXProvider(configuration: CXProviderConfiguration())
    let reportsCalls = CommandLine.arguments.contains("--report-calls")

    init(types: Set<PKPushType>) {
        super.init()
        provider.setDelegate(self, queue: DispatchQueue(label: "probe.callkit"))
        registry.delegate = self
        registry.desiredPushTypes = types
    }

    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        emit(["cb": "didUpdatePushCredentials", "type": type.rawValue, "token": pushCredentials.token.map { String(format: "%02x", $0) }.joined()])
    }

    func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping @Sendable () -> Void
    ) {
        emit(["cb": "didReceiveIncomingPush", "type": type.rawValue, "payload": payload.dictionaryPayload as? [String: Any] ?? [:]])
        guard type == .voIP, reportsCalls else { return completion() }
        let update = CXCallUpdate()
        update.remoteHandle = CXHandle(type: .generic, value: payload.dictionaryPayload["handle"] as? String ?? "caller")
        provider.reportNewIncomingCall(with: UUID(), update: update) { error in
            emit(["cb": "reportedCall", "error": errorCode(error)])
            completion()
        }
    }
}

extension PushProbe: CXProviderDelegate {
    func providerDidReset(_ provider: CXProvider) {}
}

/// A File Provider extension of one domain: each signal is a line, completed at once.
final class ExtensionProbe: NSObject, WatchLinkSignalReceiver, @unchecked Sendable {
    let error = option("--signal-error").flatMap(Int.init).flatMap(NSFileProviderError.Code.init(rawValue:))

    func didSignalEnumerator(
        for containerItemIdentifier: NSFileProviderItemIdentifier, in domain: NSFileProviderDomainIdentifier?,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        emit(["cb": "didSignalEnumerator", "container": containerItemIdentifier.rawValue, "domain": domain?.rawValue ?? NSNull()])
        completionHandler(error.map { NSFileProviderError($0) })
    }
}

emit([
    "cb": "launched", "pid": Int(ProcessInfo.processInfo.processIdentifier),
    "reason": ProcessInfo.processInfo.environment["WATCHLINK_LAUNCH_REASON"] ?? NSNull(),
])
if CommandLine.arguments.contains("--crash-at-start") {
    emit(["cb": "crashing"])
    exit(3)
}
var pushProbe: PushProbe?
if let types = option("--push-types") {
    pushProbe = PushProbe(types: Set(types.split(separator: ",").map { PKPushType(rawValue: "PKPushType" + $0.prefix(1).uppercased() + $0.dropFirst()) }))
}
var extensionProbe: ExtensionProbe?
if let domain = option("--file-provider") {
    let probe = ExtensionProbe()
    extensionProbe = probe
    let identifier = NSFileProviderDomainIdentifier(rawValue: domain)
    do {
        try WatchLinkFileProvider.attach(probe, to: domain == "default" ? nil : NSFileProviderDomain(identifier: identifier, displayName: domain))
        emit(["cb": "extensionAttached", "domain": domain])
    } catch {
        emit(["cb": "extensionAttachFailed", "error": "\(error)"])
    }
}
if let delay = option("--activate-after-ms").flatMap(UInt32.init) {
    usleep(delay * 1_000)
    run(["cmd": "activate"])
}
while let line = readLine() {
    guard let data = line.data(using: .utf8),
        let command = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else {
        emit(["cb": "badCommand", "line": line])
        continue
    }
    run(command)
}
// Standard input closed: the app keeps running until killed, as an app does.
while true { sleep(60) }

import FileProvider
import Foundation
import PushKit
import WatchLinkTesting
import XCTest

/// Which queue a callback ran on: the value each test queue (and the main queue) carries.
let queueName = DispatchSpecificKey<String>()

/// The tokens a registry's delegate was given, and whether each came on the main thread.
final class TokenLog {
    private(set) var tokens: [String] = []
    private(set) var onMainThread: [Bool] = []
    private let onToken: () -> Void

    init(onToken: @escaping () -> Void) {
        self.onToken = onToken
    }

    func record(_ credentials: PKPushCredentials) {
        tokens.append(PageCodeTests.hex(credentials.token))
        onMainThread.append(Thread.isMainThread)
        onToken()
    }
}

/// The page's app delegate, noting the tokens it is given and where.
final class RecordingAppDelegate: AppDelegate {
    private let log: TokenLog
    var tokens: [String] { log.tokens }
    var onMainThread: [Bool] { log.onMainThread }

    init(onToken: @escaping () -> Void) {
        log = TokenLog(onToken: onToken)
        super.init()
    }

    override func pushRegistry(_ registry: PKPushRegistry, didUpdate credentials: PKPushCredentials, forType type: PKPushType) {
        super.pushRegistry(registry, didUpdate: credentials, forType: type)
        log.record(credentials)
    }
}

/// The page's File Provider extension, noting the tokens it is given and where.
final class RecordingExtension: FileProviderExtension {
    private let log: TokenLog
    var tokens: [String] { log.tokens }
    var onMainThread: [Bool] { log.onMainThread }

    init(onToken: @escaping () -> Void) {
        log = TokenLog(onToken: onToken)
        super.init()
    }

    override func pushRegistry(_ registry: PKPushRegistry, didUpdate credentials: PKPushCredentials, forType type: PKPushType) {
        super.pushRegistry(registry, didUpdate: credentials, forType: type)
        log.record(credentials)
    }
}

/// The page's File Provider extension with a signal handler, so that it can be attached.
final class AttachableExtension: FileProviderExtension, WatchLinkSignalReceiver {
    func didSignalEnumerator(
        for containerItemIdentifier: NSFileProviderItemIdentifier, in domain: NSFileProviderDomainIdentifier?,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// A registry for `fileProvider` with a delegate that notes everything, on the registry's queue.
final class PushRecorder: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var recordedTokens: [String] = []
    private var recordedPayloads: [[AnyHashable: Any]] = []
    private var recordedQueues: [String] = []
    var onPush: () -> Void = {}
    var onInvalidate: () -> Void = {}
    private(set) var registry: PKPushRegistry!

    init(queue: DispatchQueue?) {
        super.init()
        DispatchQueue.main.setSpecific(key: queueName, value: DispatchQueue.main.label)
        queue?.setSpecific(key: queueName, value: queue!.label)
        registry = PKPushRegistry(queue: queue)
        registry.delegate = self
        registry.desiredPushTypes = [.fileProvider]
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    var payloads: [[AnyHashable: Any]] { locked { recordedPayloads } }
    var queueLabels: [String] { locked { recordedQueues } }

    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        locked { recordedTokens.append(PageCodeTests.hex(pushCredentials.token)) }
    }

    func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping () -> Void
    ) {
        locked {
            recordedPayloads.append(payload.dictionaryPayload)
            recordedQueues.append(DispatchQueue.getSpecific(key: queueName) ?? "?")
        }
        onPush()
        completion()
    }

    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
        onInvalidate()
    }

    /// Waits (running the main queue) until more than `count` tokens came; the newest.
    func waitForToken(_ test: XCTestCase, after count: Int = 0, timeout: Double = 10) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let tokens = locked { recordedTokens }
            if tokens.count > count { return tokens.last! }
            guard Date() < deadline else { throw WatchLinkTestingError("no token after \(count) within \(timeout) s") }
            RunLoop.current.run(until: Date().addingTimeInterval(0.01))
        }
    }
}

/// An extension's signal handler that notes each signal and completes with `error`.
final class SignalRecorder: WatchLinkSignalReceiver, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []
    private let error: NSFileProviderError?

    init(error: NSFileProviderError?) {
        self.error = error
    }

    var signals: [String] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }

    func didSignalEnumerator(
        for containerItemIdentifier: NSFileProviderItemIdentifier, in domain: NSFileProviderDomainIdentifier?,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        lock.lock()
        recorded.append("\(containerItemIdentifier.rawValue) \(domain?.rawValue ?? "(default)")")
        lock.unlock()
        completionHandler(error)
    }
}

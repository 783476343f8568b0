// swift-format-ignore-file: AlwaysUseLowerCamelCase
import LinkJSON
import WatchLinkClient

/// Why a call ended, as the app reports it.
public enum CXCallEndedReason: Int, Sendable, Hashable {
    case failed = 1
    case remoteEnded = 2
    case unanswered = 3
    case answeredElsewhere = 4
    case declinedElsewhere = 5
}

/// The app's telephony provider: what it reports to the system, backed by WatchLink's phoned.
///
/// ```swift
/// let provider = CXProvider(configuration: CXProviderConfiguration())
/// provider.setDelegate(callManager, queue: nil)
/// provider.reportNewIncomingCall(with: UUID(), update: update) { error in ... }
/// ```
///
/// A report goes to phoned (`callKit.reportNewIncomingCall`) over the process's connection to
/// it (the daemon the environment names, as for PushKit; docs/app-side.md): phoned's PushKit
/// requires a VoIP push to be reported before its completion handler runs, as iOS 13 and later
/// do, and terminates an app that does not. There is no call interface: the report is
/// allowed, except for a UUID reported before (`callUUIDAlreadyExists`).
open class CXProvider: NSObject, @unchecked Sendable {
    static let framework = "CallKit"

    open var configuration: CXProviderConfiguration
    private struct Delegation {
        weak var delegate: (any CXProviderDelegate)?
        var queue: DispatchQueue
    }
    private let delegation: Locked<Delegation>

    public init(configuration: CXProviderConfiguration) {
        self.configuration = configuration
        delegation = Locked(Delegation(delegate: nil, queue: DispatchQueue(label: "CallKit.CXProvider")))
        super.init()
    }

    /// The object told of the provider's calls, held weakly, and the queue its methods (and
    /// the completion handlers of reports) run on: the main queue when `queue` is nil.
    open func setDelegate(_ delegate: (any CXProviderDelegate)?, queue: DispatchQueue?) {
        delegation.withLock { $0 = Delegation(delegate: delegate, queue: queue ?? .main) }
    }

    /// Reports an incoming call to the system; `completion` gets `nil` when the call is
    /// allowed, or a ``CXErrorCodeIncomingCallError``.
    open func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate, completion: @escaping @Sendable ((any Error)?) -> Void) {
        let queue = delegation.withLock { $0.queue }
        let finish: @Sendable ((any Error)?) -> Void = { error in queue.async { completion(error) } }
        let connection: SystemConnection
        switch SystemConnection.shared(framework: Self.framework) {
        case .success(let shared): connection = shared
        case .failure(let failure): return finish(CXErrorCodeIncomingCallError(.unknown, failure.description))
        }
        var args: JSONObject = ["uuid": .string(UUID.uuidString), "hasVideo": .bool(update.hasVideo)]
        if let handle = update.remoteHandle { args["handle"] = .string(handle.value) }
        connection.client.send("callKit.reportNewIncomingCall", args) { result in
            switch result {
            case .success(let answer) where answer["error"]?.stringValue == "callUUIDAlreadyExists":
                finish(CXErrorCodeIncomingCallError(.callUUIDAlreadyExists, "a call with UUID \(UUID.uuidString) was reported already"))
            case .success:
                finish(nil)
            case .failure(let error):
                finish(CXErrorCodeIncomingCallError(.unknown, "cannot report the call to \(connection.location.socketPath): \(error)"))
            }
        }
    }

    /// ``reportNewIncomingCall(with:update:completion:)`` for async code.
    open func reportNewIncomingCall(with UUID: UUID, update: CXCallUpdate) async throws {
        let error: (any Error)? = await withCheckedContinuation { continuation in
            reportNewIncomingCall(with: UUID, update: update) { continuation.resume(returning: $0) }
        }
        if let error { throw error }
    }

    /// Updates a reported call's details. Nothing to update here: there is no call interface.
    open func reportCall(with UUID: UUID, updated update: CXCallUpdate) {}

    /// The call ended. Nothing to end here: there is no call interface.
    open func reportCall(with UUID: UUID, endedAt dateEnded: Date?, reason endedReason: CXCallEndedReason) {}

    /// The provider is no longer used.
    open func invalidate() {
        delegation.withLock { $0.delegate = nil }
    }
}

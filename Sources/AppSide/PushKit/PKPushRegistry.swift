import Foundation
import WatchLinkClient

/// Registers the app for PushKit pushes and hands tokens and pushes to its delegate, backed
/// by WatchLink's phoned, which plays the device's PushKit and APNs (docs/push.md).
///
/// ```swift
/// pushRegistry = PKPushRegistry(queue: nil)
/// pushRegistry.delegate = self
/// pushRegistry.desiredPushTypes = [.fileProvider]
/// ```
///
/// Setting ``desiredPushTypes`` registers with phoned (`push.register`) over the process's
/// connection to it (the daemon that `WATCHLINK_CONTROL`, or `WATCHLINK_HOME` with
/// `WATCHLINK_SIDE=phone`, names; see docs/app-side.md). The process registers the union of
/// what its registries desire, and an empty union unregisters every type. Every registry of
/// the process that desires a type gets that type's token, pushes and invalidation, on its
/// own queue. A failure to reach phoned is written to standard error: Apple's API has no
/// error to report it through.
open class PKPushRegistry: NSObject, @unchecked Sendable {
    /// Where the delegate's methods run: the queue given, or the main queue.
    let queue: DispatchQueue

    struct State {
        weak var delegate: (any PKPushRegistryDelegate)?
        var desired: Set<PKPushType>?
        /// The token each type's delegate was last given.
        var delivered: [PKPushType: String] = [:]
    }

    let state = Locked(State())

    /// A registry whose delegate methods run on `queue`, or on the main queue when it is `nil`.
    public init(queue: DispatchQueue?) {
        self.queue = queue ?? .main
        super.init()
        PushKitSystem.shared.add(self)
    }

    /// The object told of tokens and pushes; held weakly. Set it before ``desiredPushTypes``.
    open var delegate: (any PKPushRegistryDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// The push types this registry wants. Setting it registers with phoned; the delegate's
    /// `pushRegistry(_:didUpdate:for:)` follows for each type once phoned has a token for it.
    open var desiredPushTypes: Set<PKPushType>? {
        get { state.withLock { $0.desired } }
        set {
            state.withLock { state in
                state.desired = newValue
                state.delivered = state.delivered.filter { newValue?.contains($0.key) == true }
            }
            PushKitSystem.shared.desiredTypesChanged()
        }
    }

    /// The token last delivered for `type`, or `nil` when this registry does not desire the
    /// type or phoned has no token for it.
    open func pushToken(for type: PKPushType) -> Data? {
        guard state.withLock({ $0.desired?.contains(type) ?? false }) else { return nil }
        return PushKitSystem.shared.token(for: type)
    }

    /// Points the PushKit and FileProvider of this process at the daemon listening at
    /// `controlSocketPath` (`nil`: the environment's) and forgets the token known: for a test
    /// that runs app code in its own process. Registries set their types again to register.
    @_spi(Testing) public static func useDaemon(controlSocketPath: String?) {
        SystemConnection.useDaemon(controlSocketPath: controlSocketPath)
        PushKitSystem.shared.forgetRegistration()
    }
}

import Foundation

/// Instant facts about an SDK object's activation, answered from the state the device keeps.
public protocol PowerAuthSessionStatusProvider: NSObjectProtocol {
    /// Whether an activation can be started: there is neither one nor a pending one.
    @discardableResult
    func canStartActivation() -> Bool
    /// Whether an activation was created and not persisted yet.
    @discardableResult
    func hasPendingActivation() -> Bool
    /// Whether there is a valid activation.
    @discardableResult
    func hasValidActivation() -> Bool
    /// Whether a valid activation needs a protocol upgrade (never: not emulated).
    @discardableResult
    func hasProtocolUpgradeAvailable() -> Bool
    /// Whether a protocol upgrade is under way (never: not emulated).
    @discardableResult
    func hasPendingProtocolUpgrade() -> Bool
    /// The activation's identifier, nil without a valid activation.
    var activationIdentifier: String? { get }
}

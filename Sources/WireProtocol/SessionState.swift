/// What one side tells the other about its session in a STATE frame.
public struct SessionState: Sendable, Hashable {
    public var activationState: ActivationState
    public var appState: AppState
    public var flags: DeviceFlags

    public init(activationState: ActivationState = .notActivated, appState: AppState = .notRunning, flags: DeviceFlags = []) {
        self.activationState = activationState
        self.appState = appState
        self.flags = flags
    }
}

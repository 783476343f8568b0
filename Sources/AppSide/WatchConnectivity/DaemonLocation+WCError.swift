import WatchLinkClient

/// The daemon a session talks to, with its failures as WatchConnectivity reports them.
extension DaemonLocation {
    /// The daemon named by the environment.
    ///
    /// - Throws: ``WCError/Code/sessionNotSupported`` when `WATCHLINK_SIDE` names no side.
    static func resolveForSession() throws(WCError) -> DaemonLocation {
        do {
            return try resolve()
        } catch {
            throw WCError(.sessionNotSupported, error.description)
        }
    }

    /// What activation reports when nothing answers at the socket.
    func unreachable(_ error: WatchLinkError) -> WCError {
        WCError(.genericError, unreachable(error, framework: "WatchConnectivity"))
    }
}

import Foundation
import LinkControl
import WatchLinkClient

/// Which daemon an app's ``WCSession`` talks to, as the environment says; an app gets its
/// system's daemon without asking, so nothing in Apple's API names it.
///
/// - `WATCHLINK_CONTROL`: a control socket path; wins over the others.
/// - `WATCHLINK_HOME`: the WatchLink home directory (else the daemons' default home).
/// - `WATCHLINK_SIDE`: `phone` (default) or `watch`.
struct DaemonLocation: Sendable, Hashable {
    static let controlVariable = "WATCHLINK_CONTROL"
    static let homeVariable = "WATCHLINK_HOME"
    static let sideVariable = "WATCHLINK_SIDE"

    /// The control socket.
    var socketPath: String
    /// The side, when known before connecting.
    var side: WatchLinkSide?
    /// The home directory: the one given, or the socket's directory.
    var home: String

    /// The daemon named by `environment`.
    ///
    /// - Throws: ``WCError/Code/sessionNotSupported`` when `WATCHLINK_SIDE` names no side.
    static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws(WCError) -> DaemonLocation {
        var side: WatchLinkSide?
        if let text = environment[sideVariable], !text.isEmpty {
            guard let named = WatchLinkSide(rawValue: text.lowercased()) else {
                throw WCError(.sessionNotSupported, "\(sideVariable) must be 'phone' or 'watch', not '\(text)'")
            }
            side = named
        }
        if let socket = environment[controlVariable], !socket.isEmpty {
            return DaemonLocation(socketPath: socket, side: side, home: (socket as NSString).deletingLastPathComponent)
        }
        let home = WatchLinkHome.defaultPath(environment: environment)
        let chosen = side ?? .phone
        return DaemonLocation(socketPath: chosen.controlSocketPath(home: home), side: chosen, home: home)
    }

    /// A location for a socket given directly (tests).
    static func socket(_ path: String) -> DaemonLocation {
        DaemonLocation(socketPath: path, side: nil, home: (path as NSString).deletingLastPathComponent)
    }

    /// What to say when nothing answers at the socket.
    func unreachable(_ error: WatchLinkError) -> WCError {
        let daemon = side?.daemonName ?? "the WatchLink daemon"
        return WCError(.genericError, "WatchConnectivity cannot reach \(daemon): \(error.message) (start it with --home DIR and set \(Self.homeVariable)=DIR and \(Self.sideVariable)=phone|watch, or \(Self.controlVariable) to its control socket)")
    }
}

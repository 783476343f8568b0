import Foundation
import LinkControl

/// Which daemon the system frameworks of an app process talk to (`WatchConnectivity`,
/// `PushKit`, `FileProvider`), as the environment says; an app gets its system's daemon
/// without asking, so nothing in Apple's API names it.
///
/// - `WATCHLINK_CONTROL`: a control socket path; wins over the others.
/// - `WATCHLINK_HOME`: the WatchLink home directory (else the daemons' default home).
/// - `WATCHLINK_SIDE`: `phone` (default) or `watch`.
package struct DaemonLocation: Sendable, Hashable {
    package static let controlVariable = "WATCHLINK_CONTROL"
    package static let homeVariable = "WATCHLINK_HOME"
    package static let sideVariable = "WATCHLINK_SIDE"

    /// Why the environment names no daemon.
    package struct Problem: Error, Sendable, CustomStringConvertible {
        package let description: String
    }

    /// The control socket.
    package var socketPath: String
    /// The side, when known before connecting.
    package var side: WatchLinkSide?
    /// The home directory: the one given, or the socket's directory.
    package var home: String

    package init(socketPath: String, side: WatchLinkSide?, home: String) {
        self.socketPath = socketPath
        self.side = side
        self.home = home
    }

    /// The daemon named by `environment`.
    ///
    /// - Throws: ``Problem`` when `WATCHLINK_SIDE` names no side.
    package static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws(Problem) -> DaemonLocation {
        var side: WatchLinkSide?
        if let text = environment[sideVariable], !text.isEmpty {
            guard let named = WatchLinkSide(rawValue: text.lowercased()) else {
                throw Problem(description: "\(sideVariable) must be 'phone' or 'watch', not '\(text)'")
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
    package static func socket(_ path: String) -> DaemonLocation {
        DaemonLocation(socketPath: path, side: nil, home: (path as NSString).deletingLastPathComponent)
    }

    /// What to say when nothing answers at the socket: `framework` cannot reach the daemon,
    /// why, and how to point it at one.
    package func unreachable(_ error: WatchLinkError, framework: String) -> String {
        let daemon = side?.daemonName ?? "the WatchLink daemon"
        return
            "\(framework) cannot reach \(daemon): \(error.message) (start it with --home DIR and set \(Self.homeVariable)=DIR and \(Self.sideVariable)=phone|watch, or \(Self.controlVariable) to its control socket)"
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkSystem

/// The WatchLink home directory and the names of the files in it.
public enum WatchLinkHome {
    /// The phone daemon's control socket.
    public static let phoneControlSocketName = "phone.ctl"
    /// The watch daemon's control socket.
    public static let watchControlSocketName = "watch.ctl"
    /// The emulated link between the daemons.
    public static let linkSocketName = "link.sock"
    /// The shared pairing key.
    public static let pairingKeyName = "pairing.key"

    /// The home directory used when `--home` is not given: `$WATCHLINK_HOME` if set, else
    /// `$XDG_RUNTIME_DIR/watchlink` if `XDG_RUNTIME_DIR` is set, else `/tmp/watchlink-<uid>`.
    /// Empty variables count as unset.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let home = environment["WATCHLINK_HOME"], !home.isEmpty {
            return home
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime.hasSuffix("/") ? runtime + "watchlink" : runtime + "/watchlink"
        }
        return "/tmp/watchlink-\(SystemCalls.userID())"
    }

    /// `name` inside `home`.
    public static func path(_ name: String, in home: String) -> String {
        home.hasSuffix("/") ? home + name : home + "/" + name
    }
}

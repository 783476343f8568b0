import LinkControl

/// Which daemon of a WatchLink home: the emulated iPhone (`phoned`) or Apple Watch (`watchd`).
public enum WatchLinkSide: String, Sendable, Hashable, CaseIterable {
    /// `phoned`, control socket `HOME/phone.ctl`.
    case phone
    /// `watchd`, control socket `HOME/watch.ctl`.
    case watch

    /// The file name of this side's control socket in the home directory.
    public var controlSocketName: String {
        switch self {
        case .phone: return WatchLinkHome.phoneControlSocketName
        case .watch: return WatchLinkHome.watchControlSocketName
        }
    }

    /// The daemon that serves this side.
    public var daemonName: String {
        switch self {
        case .phone: return "phoned"
        case .watch: return "watchd"
        }
    }

    /// This side's control socket in `home`.
    public func controlSocketPath(home: String) -> String {
        WatchLinkHome.path(controlSocketName, in: home)
    }
}

/// Facts about a device that its counterpart's session reports (`isPaired`, `isWatchAppInstalled`, ...).
public struct DeviceFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The phone and the watch are paired.
    public static let isPaired = DeviceFlags(rawValue: 1 << 0)
    /// The watch app is installed on the watch.
    public static let isWatchAppInstalled = DeviceFlags(rawValue: 1 << 1)
    /// The app's complication is on the active watch face.
    public static let isComplicationEnabled = DeviceFlags(rawValue: 1 << 2)
    /// The iOS companion app is installed on the phone.
    public static let isCompanionAppInstalled = DeviceFlags(rawValue: 1 << 3)
    /// The watch app is a watch-only app (`WKWatchOnly`): it has no iOS counterpart to talk to.
    public static let isWatchOnlyApp = DeviceFlags(rawValue: 1 << 4)

    /// Every flag this protocol version defines; other bits make a STATE frame malformed.
    public static let all: DeviceFlags = [
        .isPaired, .isWatchAppInstalled, .isComplicationEnabled, .isCompanionAppInstalled,
        .isWatchOnlyApp,
    ]
}

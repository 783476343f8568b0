import Foundation

/// Facts about the SDK build and the system it runs on.
public final class PowerAuthSystem: NSObject {
    /// Whether the SDK was built in its DEBUG configuration: never for WatchLink's, which is an
    /// emulation and always reports false so that an app's "debug library in production" trap
    /// stays quiet.
    @discardableResult
    public static func isInDebug() -> Bool { false }

    /// The platform's name.
    @discardableResult
    public static func platform() -> String {
        #if os(Linux)
        return "Linux"
        #else
        return "macOS"
        #endif
    }

    /// A short description of the device.
    @discardableResult
    public static func deviceInfo() -> String { "WatchLink \(platform())" }
}

/// The first frame each side sends: who it is, which protocol versions it speaks, and a fresh nonce.
public struct Hello: Sendable, Hashable {
    /// The four bytes every HELLO body starts with: ASCII `"WLNK"`.
    public static let magic: [UInt8] = Array("WLNK".utf8)
    /// The longest device id, in UTF-8 bytes.
    public static let maximumDeviceIdLength = 255

    public var minVersion: UInt16
    public var maxVersion: UInt16
    public var role: Role
    /// A name of the device for logs: 1 to 255 bytes of UTF-8.
    public var deviceId: String
    /// ``LinkProtocol/nonceLength`` random bytes, fresh for every connection.
    public var nonce: [UInt8]

    public init(
        minVersion: UInt16 = LinkProtocol.minVersion, maxVersion: UInt16 = LinkProtocol.maxVersion,
        role: Role, deviceId: String, nonce: [UInt8]
    ) {
        self.minVersion = minVersion
        self.maxVersion = maxVersion
        self.role = role
        self.deviceId = deviceId
        self.nonce = nonce
    }

    /// Whether `deviceId` can travel in a HELLO: 1 to ``maximumDeviceIdLength`` bytes of UTF-8.
    public static func isValid(deviceId: String) -> Bool {
        (1...maximumDeviceIdLength).contains(deviceId.utf8.count)
    }
}

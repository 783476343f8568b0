/// Random (version 4, RFC 9562) UUIDs as text, `8-4-4-4-12`, from a pool of secure random
/// bytes refilled 4 KiB at a time rather than per id: WatchConnectivity's `transferIdentifier`s
/// in Apple's upper-case form, APNs' `apns-id`s in lower case.
public struct RandomUUIDs {
    /// The hex digits' letters.
    public enum Letters {
        case upper, lower
    }

    private let letters: Letters
    private var pool: [UInt8] = []
    private var used = 0

    public init(_ letters: Letters) {
        self.letters = letters
    }

    public mutating func next() -> String {
        if used + 16 > pool.count {
            pool = SecureRandom.bytes(4_096)
            used = 0
        }
        defer { used += 16 }
        let letters = letters
        return pool.withUnsafeBufferPointer { Self.text(UnsafeBufferPointer(rebasing: $0[used..<used + 16]), letters) }
    }

    /// The UUID of 16 random bytes, its version and variant bits set, written straight into
    /// the String's storage.
    public static func text(_ random: UnsafeBufferPointer<UInt8>, _ letters: Letters) -> String {
        precondition(random.count == 16, "a UUID is made of 16 bytes")
        let table = letters == .upper ? upperPairs : lowerPairs
        return String(unsafeUninitializedCapacity: 36) { text in
            table.withUnsafeBufferPointer { pairs in
                var out = UnsafeMutableRawPointer(text.baseAddress.unsafelyUnwrapped)
                for index in 0..<16 {
                    var byte = random[index]
                    if index == 6 { byte = (byte & 0x0F) | 0x40 }
                    if index == 8 { byte = (byte & 0x3F) | 0x80 }
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out.storeBytes(of: UInt8(ascii: "-"), as: UInt8.self)
                        out += 1
                    }
                    out.storeBytes(of: pairs[Int(byte)], as: UInt16.self)
                    out += 2
                }
            }
            return 36
        }
    }

    /// Each byte's two hex digits, as the two bytes of a `UInt16` in memory.
    private static let upperPairs = hexPairs("0123456789ABCDEF")
    private static let lowerPairs = hexPairs("0123456789abcdef")

    private static func hexPairs(_ digits: String) -> [UInt16] {
        let digits = Array(digits.utf8)
        return (0..<256).map { byte in UInt16(littleEndian: UInt16(digits[byte >> 4]) | UInt16(digits[byte & 0x0F]) << 8) }
    }
}

import LinkCrypto
import WireProtocol
import LinkSystem

/// What APNs answers to one request.
public struct APNsResponse: Error, Sendable, Equatable {
    public var status: Int
    /// The `apns-id` header: the request's, or one generated for it.
    public var apnsId: String
    /// The `reason` of the JSON body; `nil` for 200.
    public var reason: String?
    /// The `timestamp` of a 410 body: when the token stopped being valid, in ms since 1970.
    public var timestamp: Int64?
    /// `apns-unique-id`: "An identifier that is only available in the Development environment."
    public var uniqueId: String?

    public init(status: Int, apnsId: String, reason: String? = nil, timestamp: Int64? = nil, uniqueId: String? = nil) {
        self.status = status
        self.apnsId = apnsId
        self.reason = reason
        self.timestamp = timestamp
        self.uniqueId = uniqueId
    }

    /// A new `apns-id`: a random (version 4) UUID in lowercase, as APNs generates them.
    public static func newApnsId() -> String {
        uuidText(SecureRandom.bytes(16)[...])
    }

    /// 16 random bytes as a version-4 UUID in lowercase, `8-4-4-4-12`.
    static func uuidText(_ random: ArraySlice<UInt8>) -> String {
        random.withUnsafeBufferPointer { uuidText($0) }
    }

    /// As ``uuidText(_:)-(ArraySlice<UInt8>)``, written straight into the String's storage.
    static func uuidText(_ random: UnsafeBufferPointer<UInt8>) -> String {
        precondition(random.count == 16, "a UUID is made of 16 bytes")
        return String(unsafeUninitializedCapacity: 36) { text in
            hexPairs.withUnsafeBufferPointer { pairs in
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

    /// Each byte's two lower-case hex digits, as the two bytes of a `UInt16` in memory.
    private static let hexPairs: [UInt16] = (0..<256).map { byte in
        let digits = Array("0123456789abcdef".utf8)
        return UInt16(littleEndian: UInt16(digits[byte >> 4]) | UInt16(digits[byte & 0x0F]) << 8)
    }

    /// The JSON body: `{"reason": ...}` (plus `"timestamp"`), empty for 200.
    public var body: [UInt8] {
        guard let reason else { return [] }
        var text = "{\"reason\":\"\(reason.jsonEscaped)\""
        if let timestamp { text += ",\"timestamp\":\(timestamp)" }
        return Array((text + "}").utf8)
    }
}

/// The endpoint's answer to a request: its response, and how long it waits before sending it
/// (the `delay` fault; 0 sends it at once).
struct APNsAnswer {
    var response: APNsResponse
    var delayMilliseconds: Int64 = 0
}

/// `apns-id`s for the requests that bring none: random bytes from `getrandom(2)` taken from a
/// pool filled 4 KiB at a time, so that a push costs no call into the random source.
final class APNsIdSource {
    private var pool = [UInt8](repeating: 0, count: 4096)
    private var used = 4096

    func next() -> String {
        if used + 16 > pool.count {
            pool.withUnsafeMutableBytes { SystemCalls.fillRandom($0) }
            used = 0
        }
        defer { used += 16 }
        return pool.withUnsafeBufferPointer { APNsResponse.uuidText(UnsafeBufferPointer(rebasing: $0[used..<used + 16])) }
    }
}

extension String {
    var jsonEscaped: String {
        var out = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

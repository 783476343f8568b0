import LinkCrypto
import WireProtocol

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
        SecureRandom.bytes(16).withUnsafeBufferPointer { RandomUUIDs.text($0, .lower) }
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

/// `apns-id`s for the requests that bring none, from a pool of random bytes (``RandomUUIDs``),
/// so that a push costs no call into the random source; a class, since the validator keeps its
/// `next`.
final class APNsIdSource {
    private var uuids = RandomUUIDs(.lower)

    func next() -> String { uuids.next() }
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

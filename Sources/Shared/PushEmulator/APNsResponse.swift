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

    public init(status: Int, apnsId: String, reason: String? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.apnsId = apnsId
        self.reason = reason
        self.timestamp = timestamp
    }

    /// A new `apns-id`: a random (version 4) UUID in lowercase, as APNs generates them.
    public static func newApnsId() -> String {
        var bytes = SecureRandom.bytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }

    /// The JSON body: `{"reason": ...}` (plus `"timestamp"`), empty for 200.
    public var body: [UInt8] {
        guard let reason else { return [] }
        var text = "{\"reason\":\"\(reason.jsonEscaped)\""
        if let timestamp { text += ",\"timestamp\":\(timestamp)" }
        return Array((text + "}").utf8)
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

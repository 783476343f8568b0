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

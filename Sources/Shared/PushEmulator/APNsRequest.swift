/// One request as the HTTP/2 layer received it: pseudo-headers, the other headers in order
/// (repeats kept), and the body.
public struct APNsRequest: Sendable {
    public var method: String?
    public var path: String?
    /// Header fields other than pseudo-headers, names in lower case, in the order received.
    public var headers: [(name: String, value: String)]
    /// The body, cut after `maximumKeptBodySize` bytes.
    public var body: [UInt8]
    /// How many body bytes arrived, including those not kept.
    public var bodyLength: Int

    /// More body than any push type allows is counted, not kept.
    public static let maximumKeptBodySize = 5121

    public init(method: String? = nil, path: String? = nil, headers: [(name: String, value: String)] = [],
                body: [UInt8] = [], bodyLength: Int? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.bodyLength = bodyLength ?? body.count
    }

    /// All values of header `name` (lower case).
    public func values(_ name: String) -> [String] {
        headers.filter { $0.name == name }.map(\.value)
    }

    /// The value of header `name` when it was sent once or more (the first).
    public func value(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// Appends body bytes, keeping at most `maximumKeptBodySize`.
    public mutating func appendBody(_ bytes: UnsafeRawBufferPointer) {
        bodyLength += bytes.count
        let room = APNsRequest.maximumKeptBodySize - body.count
        if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
    }
}

/// One request as the HTTP/2 layer received it: pseudo-headers, the other headers in order
/// (repeats kept), and the body.
///
/// The header fields are kept as bytes, one after another in one buffer, as HPACK gave them:
/// a request costs one allocation for its header list, not two Strings per field, and the
/// checks compare bytes (``APNsRequestValidator``). The String views below are for tests and
/// tools.
public struct APNsRequest: Sendable {
    /// Each field: its name's length and its value's length (two bytes each, little endian),
    /// then the name and the value. Pseudo-headers are fields too. The fields take the first
    /// ``fieldLength`` bytes; the rest is room for the next ones, written in place.
    private(set) var fieldBytes: [UInt8] = []
    private(set) var fieldLength = 0
    /// Where the value of `:method` and of `:path` is in ``fieldBytes`` (the first of each).
    private(set) var methodValue: Range<Int>?
    private(set) var pathValue: Range<Int>?
    /// The body, cut after `maximumKeptBodySize` bytes.
    public var body: [UInt8]
    /// How many body bytes arrived, including those not kept.
    public var bodyLength: Int

    /// More body than any push type allows is counted, not kept.
    public static let maximumKeptBodySize = 5121
    /// The longest name or value a field can have (the header list is smaller; see
    /// `HTTP2ServerSession.maximumHeaderListSize`).
    static let maximumFieldPartLength = Int(UInt16.max)

    public init(
        method: String? = nil, path: String? = nil, headers: [(name: String, value: String)] = [],
        body: [UInt8] = [], bodyLength: Int? = nil
    ) {
        self.body = body
        self.bodyLength = bodyLength ?? body.count
        if let method { self.method = method }
        if let path { self.path = path }
        for (name, value) in headers { append(name: name, value: value) }
    }

    /// An empty request whose header list has room for `capacity` bytes.
    init(reservingHeaderCapacity capacity: Int) {
        body = []
        bodyLength = 0
        fieldBytes = [UInt8](repeating: 0, count: capacity)
    }

    // MARK: Receiving

    /// Appends one field (tests and tools build requests this way).
    mutating func append(name: String, value: String) {
        var name = name, value = value
        name.withUTF8 { name in value.withUTF8 { append(name: name, value: $0) } }
    }

    /// Appends one field as received; `:method` and `:path` are remembered.
    mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let nameLength = min(name.count, Self.maximumFieldPartLength)
        let valueLength = min(value.count, Self.maximumFieldPartLength)
        let valueStart = fieldLength + 4 + nameLength
        let end = valueStart + valueLength
        if end > fieldBytes.count {
            fieldBytes.append(contentsOf: repeatElement(0, count: max(end, 2 * fieldBytes.count) - fieldBytes.count))
        }
        let start = fieldLength
        fieldBytes.withUnsafeMutableBufferPointer { bytes in
            let field = bytes.baseAddress.unsafelyUnwrapped + start
            field[0] = UInt8(truncatingIfNeeded: nameLength)
            field[1] = UInt8(truncatingIfNeeded: nameLength >> 8)
            field[2] = UInt8(truncatingIfNeeded: valueLength)
            field[3] = UInt8(truncatingIfNeeded: valueLength >> 8)
            if let source = name.baseAddress { (field + 4).update(from: source, count: nameLength) }
            if let source = value.baseAddress { (field + 4 + nameLength).update(from: source, count: valueLength) }
        }
        fieldLength = end
        guard name.first == UInt8(ascii: ":") else { return }
        if methodValue == nil, Bytes.equal(name, ":method") {
            methodValue = valueStart..<end
        } else if pathValue == nil, Bytes.equal(name, ":path") {
            pathValue = valueStart..<end
        }
    }

    /// Appends body bytes, keeping at most `maximumKeptBodySize`.
    public mutating func appendBody(_ bytes: UnsafeRawBufferPointer) {
        bodyLength += bytes.count
        let room = APNsRequest.maximumKeptBodySize - body.count
        if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
    }

    // MARK: Reading

    /// Calls `body` with the name and value of each field, pseudo-headers included, in the
    /// order received; the buffers are valid during the call only.
    func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try fieldBytes.withUnsafeBufferPointer { try Self.forEachField(in: UnsafeBufferPointer(rebasing: $0[..<fieldLength]), body) }
    }

    /// As ``forEachField(_:)``, over ``fieldBytes`` held already.
    static func forEachField(
        in bytes: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset + 4 <= bytes.count {
            let nameLength = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            let valueLength = Int(bytes[offset + 2]) | Int(bytes[offset + 3]) << 8
            let nameStart = offset + 4
            try body(
                UnsafeBufferPointer(start: base + nameStart, count: nameLength),
                UnsafeBufferPointer(start: base + nameStart + nameLength, count: valueLength))
            offset = nameStart + nameLength + valueLength
        }
    }

    /// The bytes of `range` of ``fieldBytes`` as a String.
    func text(_ range: Range<Int>) -> String {
        String(decoding: fieldBytes[range], as: UTF8.self)
    }

    /// Setting one (tests build requests this way) appends a new field, which is the one
    /// remembered from then on.
    public var method: String? {
        get { methodValue.map(text) }
        set {
            methodValue = nil
            if let newValue { append(name: ":method", value: newValue) }
        }
    }

    public var path: String? {
        get { pathValue.map(text) }
        set {
            pathValue = nil
            if let newValue { append(name: ":path", value: newValue) }
        }
    }

    /// Header fields other than pseudo-headers, names in lower case, in the order received.
    public var headers: [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        forEachField { name, value in
            guard name.first != UInt8(ascii: ":") else { return }
            result.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return result
    }

    /// All values of header `name` (lower case).
    public func values(_ name: String) -> [String] {
        headers.filter { $0.name == name }.map(\.value)
    }

    /// The value of header `name` when it was sent once or more (the first).
    public func value(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}

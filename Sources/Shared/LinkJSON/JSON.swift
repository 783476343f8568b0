/// Parsing and printing of JSON text (RFC 8259).
public enum JSON {
    /// The deepest nesting of arrays and objects that ``parse(_:)`` accepts.
    public static let maximumDepth = 64

    /// Parses one JSON value from UTF-8 bytes.
    ///
    /// Strict RFC 8259: one value surrounded by optional whitespace, no comments, no trailing
    /// commas, valid UTF-8 only, no lone surrogates. Integers that fit `Int64` become
    /// ``JSONValue/int(_:)``, other numbers ``JSONValue/double(_:)``. A repeated object key
    /// keeps its last value. Nesting deeper than ``maximumDepth`` is refused.
    ///
    /// - Throws: ``JSONParseError`` naming the byte offset and what was expected there.
    public static func parse(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        if let result = try bytes.withContiguousStorageIfAvailable({ buffer in
            var parser = JSONParser(buffer)
            return try parser.parseDocument()
        }) {
            return result
        }
        return try Array(bytes).withUnsafeBufferPointer { buffer in
            var parser = JSONParser(buffer)
            return try parser.parseDocument()
        }
    }

    /// Parses one JSON value from UTF-8 bytes as ``parse(_:)-(Collection<UInt8>)`` does, with
    /// the same errors, but keeps each object nested `depth` levels deep or deeper (the top
    /// value is at depth 1) as its text: checked, not built. Reading such an object's members
    /// parses its text each time; ``JSONValue/materialized`` reads all of a value's at once;
    /// the serializer writes it as ``serialize(_:)`` writes the parsed object. For values
    /// that are mostly passed on as they are, such as the dictionaries in control requests.
    public static func parse(_ bytes: some Collection<UInt8>, keepingObjectsAsTextFrom depth: Int) throws -> JSONValue {
        if let result = try bytes.withContiguousStorageIfAvailable({ buffer in
            var parser = JSONParser(buffer, keepingObjectsAsTextFrom: depth)
            return try parser.parseDocument()
        }) {
            return result
        }
        return try Array(bytes).withUnsafeBufferPointer { buffer in
            var parser = JSONParser(buffer, keepingObjectsAsTextFrom: depth)
            return try parser.parseDocument()
        }
    }

    /// Reads a JSON object member by member without building it: `member` gets each key's
    /// bytes and its value, parsed as ``parse(_:keepingObjectsAsTextFrom:)`` parses the values
    /// of the object (those at depth 2). True when the whole document was such an object and
    /// `member` took every member; false as soon as the document is anything else (another
    /// value, invalid JSON, a key with an escape or a byte outside ASCII, bytes not contiguous
    /// in memory) or `member` declines one, after an unknown number of calls: the caller then parses the document as a whole,
    /// which finds the error. For the envelope of a control request, read on every request.
    public static func readMembers(
        _ bytes: some Collection<UInt8>, keepingObjectsAsTextFrom depth: Int,
        _ member: (_ key: UnsafeBufferPointer<UInt8>, _ value: JSONValue) -> Bool
    ) -> Bool {
        let read = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(buffer, keepingObjectsAsTextFrom: depth)
            return (try? parser.readMembers(member)) ?? false
        }
        return read ?? false
    }

    /// The characters of `integer` as JSON writes it (decimal, its sign included).
    public static func decimalLength(of integer: Int64) -> Int {
        var length = integer < 0 ? 2 : 1
        var magnitude = integer.magnitude
        while magnitude >= 10 {
            magnitude /= 10
            length += 1
        }
        return length
    }

    /// Writes `integer` as JSON writes it at `destination`: ``decimalLength(of:)`` bytes.
    public static func writeDecimal(_ integer: Int64, to destination: UnsafeMutablePointer<UInt8>) {
        let length = decimalLength(of: integer)
        var magnitude = integer.magnitude
        var digit = destination + length - 1
        repeat {
            digit.pointee = UInt8(ascii: "0") + UInt8(magnitude % 10)
            digit -= 1
            magnitude /= 10
        } while magnitude > 0
        if integer < 0 { destination.pointee = UInt8(ascii: "-") }
    }

    /// The `Int64` of a JSON number's text that has neither fraction nor exponent, nil when it
    /// does not fit: how the parser tells an integer (``JSONValue/int(_:)``) from a number.
    public static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        let negative = text.first == UInt8(ascii: "-")
        var value: Int64 = 0
        for byte in text.dropFirst(negative ? 1 : 0) {
            let digit = Int64(byte &- UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative
                ? shifted.subtractingReportingOverflow(digit)
                : shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
        }
        return value
    }

    /// Parses one JSON value from a string.
    public static func parse(_ text: String) throws -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// The compact, single-line JSON text of `value`.
    ///
    /// Control characters in strings are escaped, `/` is not; non-finite doubles print as
    /// `null`; doubles print in their shortest round-trip form, integral ones with `.0`.
    public static func serialize(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        serialize(value, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The indented JSON text of `value`, for files people read: one member or element a
    /// line, two spaces a level, members in the object's order, no final newline. Strings and
    /// numbers print as in ``serialize(_:)``.
    public static func prettyPrinted(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        JSONSerializer.writeIndented(value, depth: 0, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact JSON text of `value` to `bytes`.
    public static func serialize(_ value: JSONValue, into bytes: inout [UInt8]) {
        JSONSerializer.write(value, into: &bytes)
    }

    /// Appends the compact text of `value` to `bytes`, except that an object kept as compact
    /// text of `threshold` bytes or more (a large message's dictionary, written straight from
    /// its property list) is not copied: it is returned, with the offset in `bytes` where it
    /// belongs, for a write that sends it from where it is (`sendmsg`).
    public static func serialize(
        _ value: JSONValue, into bytes: inout [UInt8], detachingTextsOfAtLeast threshold: Int
    ) -> [(offset: Int, text: [UInt8])] {
        var detached = JSONSerializer.Detached(threshold: threshold)
        JSONSerializer.write(value, into: &bytes, detaching: &detached)
        return detached.texts
    }
}

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
}

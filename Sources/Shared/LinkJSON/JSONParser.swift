/// A recursive-descent parser over a contiguous UTF-8 buffer.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// Objects nested this deep or deeper are checked but not built: kept as their text.
    private let textDepth: Int
    /// False while an object kept as text is checked: nothing is built.
    private var building = true

    init(_ bytes: UnsafeBufferPointer<UInt8>, keepingObjectsAsTextFrom textDepth: Int = .max) {
        self.bytes = bytes
        self.textDepth = textDepth
    }

    mutating func parseDocument() throws -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else {
            throw fail(bytes.isEmpty ? "empty input, expected a JSON value" : "expected a JSON value, found only whitespace")
        }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else {
            throw fail("unexpected \(describe(bytes[index])) after the JSON value")
        }
        return value
    }

    /// Reads the document as an object member by member without building it (see
    /// ``JSON/readMembers(_:keepingObjectsAsTextFrom:_:)``): false as soon as it is not an
    /// object, a key is not plain ASCII text, or `member` declines one.
    mutating func readMembers(_ member: (_ key: UnsafeBufferPointer<UInt8>, _ value: JSONValue) -> Bool) throws -> Bool {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else { return false }
        let read = try skipPlainContainer(depth: 1, closedBy: UInt8(ascii: "}")) { parser in
            let keyStart = parser.index + 1
            guard parser.peek() == UInt8(ascii: "\""), parser.skipPlainString() else { return false }
            let key = UnsafeBufferPointer(rebasing: parser.bytes[keyStart..<parser.index - 1])
            parser.skipWhitespace()
            guard parser.peek() == UInt8(ascii: ":") else { return false }
            parser.index += 1
            parser.skipWhitespace()
            // The value at the depth the parse of the whole object gives it.
            return member(key, try parser.parseValue(depth: 1))
        }
        skipWhitespace()
        return read && index == bytes.count
    }

    // MARK: Values

    private mutating func parseValue(depth: Int) throws -> JSONValue {
        guard index < bytes.count else {
            throw fail("unexpected end of input, expected a value")
        }
        switch bytes[index] {
        case UInt8(ascii: "{") where building && depth + 1 >= textDepth:
            let start = index
            let plain = skipPlainObject(depth: depth + 1)
            if !plain {
                index = start
                building = false
                defer { building = true }
                _ = try parseObject(depth: depth + 1)
            }
            return .object(JSONObject(sourceText: Array(bytes[start..<index]), stringsArePlain: plain))
        case UInt8(ascii: "{"):
            return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["):
            return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw fail("unexpected \(describe(bytes[index])), expected a value")
        }
    }

    private mutating func parseObject(depth: Int) throws -> JSONValue {
        try checkDepth(depth)
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if building, peek() != UInt8(ascii: "}") {
            // Room for the members of a usual object without growing it member by member.
            object.reserveCapacity(8)
        }
        if peek() == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else {
                throw fail(
                    index < bytes.count
                        ? "expected '\"' to begin object key, found \(describe(bytes[index]))"
                        : "unexpected end of input, expected '\"' to begin object key")
            }
            let key = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else {
                throw fail("expected ':' after object key")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            if building { object[key] = value }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(object)
            default:
                throw fail("expected ',' or '}' after object member")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws -> JSONValue {
        try checkDepth(depth)
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            let element = try parseValue(depth: depth)
            if building { elements.append(element) }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default:
                throw fail("expected ',' or ']' after array element")
            }
        }
    }

    private func checkDepth(_ depth: Int) throws {
        if depth > JSON.maximumDepth {
            throw fail("nesting deeper than \(JSON.maximumDepth) levels")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let start = index
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for byte in expected {
            guard index < bytes.count, bytes[index] == byte else {
                throw JSONParseError(offset: start, message: "invalid literal, expected '\(literal)'")
            }
            index += 1
        }
    }

    // MARK: Objects kept as text

    // An object kept as text is checked by these first: they build nothing and know only what
    // most objects are made of (strings of ASCII without escapes, numbers, literals, containers
    // of those), and say false at anything else, valid or not, with `index` anywhere. The
    // caller then checks the object again from its start with ``parseObject(depth:)``, which
    // finds any error.

    /// The object at `index` (its `{`), checked as ``parseObject(depth:)`` checks it.
    private mutating func skipPlainObject(depth: Int) -> Bool {
        skipPlainContainer(depth: depth, closedBy: UInt8(ascii: "}")) { parser in
            guard parser.peek() == UInt8(ascii: "\""), parser.skipPlainString() else { return false }
            parser.skipWhitespace()
            guard parser.peek() == UInt8(ascii: ":") else { return false }
            parser.index += 1
            parser.skipWhitespace()
            return parser.skipPlainValue(depth: depth)
        }
    }

    /// The array at `index` (its `[`), checked as ``parseArray(depth:)`` checks it.
    private mutating func skipPlainArray(depth: Int) -> Bool {
        skipPlainContainer(depth: depth, closedBy: UInt8(ascii: "]")) { parser in parser.skipPlainValue(depth: depth) }
    }

    /// The container at `index` (its opening bracket), its members or elements each checked by
    /// `element` from their first byte.
    private mutating func skipPlainContainer(
        depth: Int, closedBy close: UInt8,
        _ element: (inout JSONParser) throws -> Bool
    ) rethrows -> Bool {
        guard depth <= JSON.maximumDepth else { return false }
        index += 1
        skipWhitespace()
        if peek() == close {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            guard try element(&self) else { return false }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                index += 1
            case close:
                index += 1
                return true
            default:
                return false
            }
        }
    }

    /// The value at `index`, checked as ``parseValue(depth:)`` checks it.
    private mutating func skipPlainValue(depth: Int) -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "{"): return skipPlainObject(depth: depth + 1)
        case UInt8(ascii: "["): return skipPlainArray(depth: depth + 1)
        case UInt8(ascii: "\""): return skipPlainString()
        case UInt8(ascii: "t"): return (try? expectLiteral("true")) != nil
        case UInt8(ascii: "f"): return (try? expectLiteral("false")) != nil
        case UInt8(ascii: "n"): return (try? expectLiteral("null")) != nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return (try? parseNumber()) != nil
        default: return false
        }
    }

    /// The string at `index` (its opening quote), when it is ASCII without an escape.
    private mutating func skipPlainString() -> Bool {
        index += 1
        while true {
            index = JSONStringBytes.skipPlain(bytes, from: index, nonASCIIIsPlain: false)
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return true }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { return false }
        }
    }

    // MARK: Numbers

    private mutating func parseNumber() throws -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") {
            index += 1
        }
        guard let first = peek(), isDigit(first) else {
            throw fail("expected a digit after '-'")
        }
        index += 1
        if first == UInt8(ascii: "0"), let next = peek(), isDigit(next) {
            throw fail("leading zeros are not allowed in numbers")
        }
        skipDigits()
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let next = peek(), isDigit(next) else {
                throw fail("expected a digit after the decimal point")
            }
            skipDigits()
        }
        if let next = peek(), next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                index += 1
            }
            guard let digit = peek(), isDigit(digit) else {
                throw fail("expected a digit in the exponent")
            }
            skipDigits()
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if isInteger, let integer = JSON.integer(text) {
            return .int(integer)
        }
        guard let number = Double(String(decoding: text, as: UTF8.self)), number.isFinite else {
            throw JSONParseError(offset: start, message: "number is out of range")
        }
        return .double(number)
    }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) {
            index += 1
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // MARK: Strings

    private mutating func parseString() throws -> String {
        let open = index
        index += 1
        var decoded: [UInt8] = []
        var runStart = index
        while true {
            index = JSONStringBytes.skipPlain(bytes, from: index, nonASCIIIsPlain: false)
            guard index < bytes.count else {
                throw JSONParseError(offset: open, message: "unterminated string")
            }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\"") where !building:
                index += 1
                return ""
            case UInt8(ascii: "\""):
                if decoded.isEmpty {
                    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                decoded.append(contentsOf: bytes[runStart..<index])
                index += 1
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                decoded.append(contentsOf: bytes[runStart..<index])
                try parseEscape(into: &decoded)
                runStart = index
            case 0x00..<0x20:
                throw fail("control character \(describe(byte)) in string must be escaped")
            case 0x80...:
                index += try validUTF8SequenceLength(at: index)
            default:
                index += 1
            }
        }
    }

    private mutating func parseEscape(into decoded: inout [UInt8]) throws {
        let start = index
        index += 1
        guard index < bytes.count else {
            throw JSONParseError(offset: start, message: "unterminated escape sequence")
        }
        let letter = bytes[index]
        index += 1
        switch letter {
        case UInt8(ascii: "\""): decoded.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): decoded.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): decoded.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4(escapeStart: start)
            let scalarValue: UInt32
            switch unit {
            case 0xD800...0xDBFF:
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw JSONParseError(offset: start, message: "lone high surrogate \(Self.escapeText(unit)) (a low surrogate escape must follow)")
                }
                let lowStart = index
                index += 2
                let low = try parseHex4(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONParseError(
                        offset: start, message: "lone high surrogate \(Self.escapeText(unit)) (followed by \(Self.escapeText(low)), not a low surrogate)")
                }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            case 0xDC00...0xDFFF:
                throw JSONParseError(offset: start, message: "lone low surrogate \(Self.escapeText(unit))")
            default:
                scalarValue = UInt32(unit)
            }
            decoded.append(contentsOf: String(Character(Unicode.Scalar(scalarValue)!)).utf8)
        default:
            throw JSONParseError(offset: start, message: "invalid escape sequence '\\\(Self.printable(letter))'")
        }
    }

    private mutating func parseHex4(escapeStart: Int) throws -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard index < bytes.count, let digit = Self.hexValue(bytes[index]) else {
                throw JSONParseError(offset: escapeStart, message: "invalid \\u escape, expected 4 hexadecimal digits")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func escapeText(_ unit: UInt16) -> String {
        let hex = String(unit, radix: 16, uppercase: true)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }

    /// The length of the well-formed UTF-8 sequence at `position` (Unicode Table 3-7).
    private func validUTF8SequenceLength(at position: Int) throws -> Int {
        let lead = bytes[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default:
            throw JSONParseError(offset: position, message: "invalid UTF-8 byte \(Self.hexByte(lead)) in string")
        }
        for offset in 1..<length {
            let next = position + offset
            guard next < bytes.count, (offset == 1 ? secondRange : 0x80...0xBF).contains(bytes[next]) else {
                throw JSONParseError(offset: position, message: "invalid UTF-8 sequence starting with \(Self.hexByte(lead)) in string")
            }
        }
        return length
    }

    // MARK: Helpers

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private func fail(_ message: String) -> JSONParseError {
        if index >= bytes.count, !message.hasPrefix("unexpected end"), !message.hasPrefix("empty"), !message.hasPrefix("expected a JSON") {
            return JSONParseError(offset: index, message: "unexpected end of input, " + message)
        }
        return JSONParseError(offset: index, message: message)
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F {
            return "character '\(Self.printable(byte))'"
        }
        return "byte \(Self.hexByte(byte))"
    }

    private static func printable(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? String(UnicodeScalar(byte)) : hexByte(byte)
    }

    private static func hexByte(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16, uppercase: true)
        return "0x" + (hex.count == 1 ? "0" : "") + hex
    }
}

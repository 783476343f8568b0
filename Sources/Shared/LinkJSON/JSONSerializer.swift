/// Writes JSON values as compact UTF-8 text.
enum JSONSerializer {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func write(_ value: JSONValue, into bytes: inout [UInt8]) {
        var detached = Detached(threshold: .max)
        write(value, into: &bytes, detaching: &detached)
    }

    /// Objects kept as compact text of at least `threshold` bytes, left out of the bytes
    /// written and listed with the offset they belong at.
    struct Detached {
        let threshold: Int
        var texts: [(offset: Int, text: [UInt8])] = []
    }

    static func write(_ value: JSONValue, into bytes: inout [UInt8], detaching detached: inout Detached) {
        switch value {
        case .null:
            append("null", to: &bytes)
        case .bool(let flag):
            append(flag ? "true" : "false", to: &bytes)
        case .int(let number):
            writeInteger(number, into: &bytes)
        case .double(let number):
            writeDouble(number, into: &bytes)
        case .string(let text):
            writeString(text, into: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element, into: &bytes, detaching: &detached)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            if let text = object.compactText {
                if text.count >= detached.threshold {
                    detached.texts.append((bytes.count, text))
                } else {
                    bytes.append(contentsOf: text)
                }
                return
            }
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                writeString(key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                write(member, into: &bytes, detaching: &detached)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends a literal's bytes (without the generic path of a String's UTF-8 view).
    static func append(_ literal: StaticString, to bytes: inout [UInt8]) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// An integer in decimal, without making a String of it.
    static func writeInteger(_ number: Int64, into bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            JSON.writeDecimal(number, to: digits.baseAddress!)
            bytes.append(contentsOf: UnsafeBufferPointer(start: digits.baseAddress, count: JSON.decimalLength(of: number)))
        }
    }

    /// A double in its shortest round-trip form (integral ones with `.0`); `null` when not finite.
    static func writeDouble(_ number: Double, into bytes: inout [UInt8]) {
        if number.isFinite {
            bytes.append(contentsOf: number.description.utf8)
        } else {
            append("null", to: &bytes)
        }
    }

    /// Like ``write(_:into:)``, with a line for each member and element, indented by two
    /// spaces a level from `depth`.
    static func writeIndented(_ value: JSONValue, depth: Int, into bytes: inout [UInt8]) {
        switch value {
        case .array(let elements) where !elements.isEmpty:
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(depth + 1, into: &bytes)
                writeIndented(element, depth: depth + 1, into: &bytes)
            }
            newline(depth, into: &bytes)
            bytes.append(UInt8(ascii: "]"))
        case .object(let object) where !object.isEmpty:
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                newline(depth + 1, into: &bytes)
                writeString(key, into: &bytes)
                bytes.append(contentsOf: ": ".utf8)
                writeIndented(member, depth: depth + 1, into: &bytes)
            }
            newline(depth, into: &bytes)
            bytes.append(UInt8(ascii: "}"))
        default:
            write(value, into: &bytes)
        }
    }

    private static func newline(_ depth: Int, into bytes: inout [UInt8]) {
        bytes.append(0x0A)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
    }

    static func writeString(_ text: String, into bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { writeString(utf8: $0, into: &bytes) }
    }

    /// A string of valid UTF-8 bytes.
    static func writeString(utf8: UnsafeBufferPointer<UInt8>, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Runs of bytes that need no escape are copied whole: strings are mostly such runs.
        var runStart = 0
        var index = 0
        while true {
            index = JSONStringBytes.skipPlain(utf8, from: index, nonASCIIIsPlain: true)
            guard index < utf8.count else { break }
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                writeEscaped(byte, into: &bytes)
                runStart = index + 1
            }
            index += 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        bytes.append(UInt8(ascii: "\""))
    }

    /// The escape of a byte that JSON does not take as it is in a string.
    private static func writeEscaped(_ byte: UInt8, into bytes: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""):
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"):
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A:
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D:
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09:
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0x08:
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x0C:
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        case 0x00..<0x20:
            bytes.append(contentsOf: [
                UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)],
            ])
        default:
            bytes.append(byte)
        }
    }
}

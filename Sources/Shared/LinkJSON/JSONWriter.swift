/// Writes one JSON object as compact text, value by value, with no ``JSONValue`` between:
/// for values that are read from something else (a property list) and only written.
///
/// The text is what ``JSON/serialize(_:)`` writes for the same members in the same order
/// (its own routines write each string and number), so ``object()`` can stand in for the
/// object it describes: written, it is copied as it is; read, it is parsed.
///
/// The caller writes well-formed JSON: ``key(utf8:)`` before each member's value inside an
/// object, each container begun and ended, strings of valid UTF-8, one object at the top.
public struct JSONWriter {
    private var text: [UInt8] = []
    /// Nothing written yet in the current container: no comma before the next member or element.
    private var atContainerStart = true
    /// A key was just written: its value follows without a comma.
    private var afterKey = false

    public init(reservingCapacity capacity: Int = 0) {
        text.reserveCapacity(capacity)
    }

    /// Begins an object (the top one, a member's value or an array's element).
    public mutating func beginObject() { begin(UInt8(ascii: "{")) }

    /// Ends the innermost object.
    public mutating func endObject() { end(UInt8(ascii: "}")) }

    /// Begins an array.
    public mutating func beginArray() { begin(UInt8(ascii: "[")) }

    /// Ends the innermost array.
    public mutating func endArray() { end(UInt8(ascii: "]")) }

    private mutating func begin(_ bracket: UInt8) {
        beforeValue()
        text.append(bracket)
        atContainerStart = true
    }

    private mutating func end(_ bracket: UInt8) {
        text.append(bracket)
        atContainerStart = false
    }

    /// The name of the next member, as valid UTF-8 bytes.
    public mutating func key(utf8: UnsafeBufferPointer<UInt8>) {
        if !atContainerStart { text.append(UInt8(ascii: ",")) }
        atContainerStart = false
        JSONSerializer.writeString(utf8: utf8, into: &text)
        text.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// The name of the next member.
    public mutating func key(_ name: String) {
        var name = name
        name.withUTF8 { key(utf8: $0) }
    }

    /// A string of valid UTF-8 bytes.
    public mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        beforeValue()
        JSONSerializer.writeString(utf8: utf8, into: &text)
    }

    /// A string.
    public mutating func string(_ value: String) {
        beforeValue()
        JSONSerializer.writeString(value, into: &text)
    }

    /// An integer (``JSONValue/int(_:)``).
    public mutating func integer(_ value: Int64) {
        beforeValue()
        JSONSerializer.writeInteger(value, into: &text)
    }

    /// A number (``JSONValue/double(_:)``): `null` when not finite.
    public mutating func double(_ value: Double) {
        beforeValue()
        JSONSerializer.writeDouble(value, into: &text)
    }

    /// `true` or `false`.
    public mutating func bool(_ value: Bool) {
        beforeValue()
        JSONSerializer.append(value ? "true" : "false", to: &text)
    }

    /// `null`.
    public mutating func null() {
        beforeValue()
        JSONSerializer.append("null", to: &text)
    }

    /// The object written, which must be complete: one object, every container ended.
    public func object() -> JSONObject {
        JSONObject(compactText: text)
    }

    private mutating func beforeValue() {
        if afterKey {
            afterKey = false
        } else if !atContainerStart {
            text.append(UInt8(ascii: ","))
        }
        atContainerStart = false
    }
}

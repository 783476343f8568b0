#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WireProtocol

/// Decodes the input as a binary property list dictionary; the check without decoding, the
/// reading of the entries without a Swift dictionary and the walk must agree with the decoder
/// (the entries' errors too, the walk's values where it walks), whatever decodes must
/// re-encode (from the dictionary and from the entries alike), and the re-encoding must be
/// stable across another decode.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let result = Result { try PropertyListCodec.decodeDictionary(bytes) }
    let decoded = try? result.get()
    precondition(
        PropertyListCodec.isDictionaryByCheck(bytes) == (decoded != nil),
        "the check without decoding and the decoder disagree")
    let entries = Result { try PropertyListCodec.decodeEntries(bytes) }
    switch (result, entries) {
    case (.success(let dictionary), .success(let entries)):
        // Values are compared through their encodings below (a NaN is not equal to itself).
        precondition(
            entries.count == dictionary.count && entries.allSatisfy { dictionary[$0.key] != nil },
            "the entries and the dictionary have different keys")
    case (.failure(let error), .failure(let entriesError)):
        precondition("\(error)" == "\(entriesError)", "the entries and the decoder fail differently")
    default:
        preconditionFailure("the entries and the decoder disagree")
    }
    var walker = RebuildingWalker()
    if PropertyListCodec.walkDictionary(bytes, with: &walker) {
        guard let decoded, case .dictionary(let walked)? = walker.top else {
            preconditionFailure("the walk takes what the decoder refuses")
        }
        precondition(
            (try? PropertyListCodec.encode(walked)) == (try? PropertyListCodec.encode(decoded)),
            "the walk and the decoder give different values")
    }
    guard let dictionary = decoded else { return 0 }
    guard let encoded = try? PropertyListCodec.encode(dictionary) else { return 0 }
    precondition(
        (try? PropertyListCodec.encode(entries: (try? entries.get()) ?? [])) == encoded,
        "the entries encode differently from the dictionary")
    guard let again = try? PropertyListCodec.decodeDictionary(encoded) else {
        preconditionFailure("an encoded dictionary does not decode")
    }
    guard let reencoded = try? PropertyListCodec.encode(again) else {
        preconditionFailure("a decoded dictionary does not re-encode")
    }
    precondition(reencoded == encoded, "encoding is not stable across decode")
    return 0
}

/// Builds the value a walk reports.
private struct RebuildingWalker: PropertyListWalker {
    private enum Open {
        case array([PropertyListValue])
        case dictionary([String: PropertyListValue], key: String?)
    }

    private var open: [Open] = []
    private(set) var top: PropertyListValue?

    mutating func beginDictionary(count: Int) { open.append(.dictionary([:], key: nil)) }
    mutating func beginArray(count: Int) { open.append(.array([])) }

    mutating func key(_ ascii: UnsafeBufferPointer<UInt8>) {
        guard case .dictionary(let entries, nil) = open.removeLast() else { preconditionFailure("a key outside a dictionary") }
        open.append(.dictionary(entries, key: String(decoding: ascii, as: UTF8.self)))
    }

    mutating func endDictionary() {
        guard case .dictionary(let entries, nil) = open.removeLast() else { preconditionFailure("an unbalanced dictionary") }
        add(.dictionary(entries))
    }

    mutating func endArray() {
        guard case .array(let elements) = open.removeLast() else { preconditionFailure("an unbalanced array") }
        add(.array(elements))
    }

    mutating func string(_ ascii: UnsafeBufferPointer<UInt8>) { add(.string(String(decoding: ascii, as: UTF8.self))) }
    mutating func integer(_ value: Int64) { add(.integer(value)) }
    mutating func real(_ value: Double) { add(.real(value)) }
    mutating func boolean(_ value: Bool) { add(.boolean(value)) }
    mutating func data(_ bytes: UnsafeBufferPointer<UInt8>) { add(.data(Array(bytes))) }
    mutating func date(_ value: Date) { add(.date(value)) }

    private mutating func add(_ value: PropertyListValue) {
        switch open.popLast() {
        case nil:
            top = value
        case .array(var elements):
            elements.append(value)
            open.append(.array(elements))
        case .dictionary(var entries, let key?):
            precondition(entries.updateValue(value, forKey: key) == nil, "a key walked twice")
            open.append(.dictionary(entries, key: nil))
        case .dictionary(_, nil):
            preconditionFailure("a dictionary value without its key")
        }
    }
}

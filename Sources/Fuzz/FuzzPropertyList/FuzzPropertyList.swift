import WireProtocol

/// Decodes the input as a binary property list dictionary; the check without decoding and
/// the reading of the entries without a Swift dictionary must agree with the decoder (the
/// entries' errors too), whatever decodes must re-encode (from the dictionary and from the
/// entries alike), and the re-encoding must be stable across another decode.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let result = Result { try PropertyListCodec.decodeDictionary(bytes) }
    let decoded = try? result.get()
    precondition(PropertyListCodec.isDictionaryByCheck(bytes) == (decoded != nil),
                 "the check without decoding and the decoder disagree")
    let entries = Result { try PropertyListCodec.decodeEntries(bytes) }
    switch (result, entries) {
    case (.success(let dictionary), .success(let entries)):
        // Values are compared through their encodings below (a NaN is not equal to itself).
        precondition(entries.count == dictionary.count && entries.allSatisfy { dictionary[$0.key] != nil },
                     "the entries and the dictionary have different keys")
    case (.failure(let error), .failure(let entriesError)):
        precondition("\(error)" == "\(entriesError)", "the entries and the decoder fail differently")
    default:
        preconditionFailure("the entries and the decoder disagree")
    }
    guard let dictionary = decoded else { return 0 }
    guard let encoded = try? PropertyListCodec.encode(dictionary) else { return 0 }
    precondition((try? PropertyListCodec.encode(entries: (try? entries.get()) ?? [])) == encoded,
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

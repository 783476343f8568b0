import WireProtocol

/// Decodes the input as a binary property list dictionary; the check without decoding must
/// agree with the decoder, whatever decodes must re-encode, and the re-encoding must be
/// stable across another decode.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let decoded = try? PropertyListCodec.decodeDictionary(bytes)
    precondition(PropertyListCodec.isDictionaryByCheck(bytes) == (decoded != nil),
                 "the check without decoding and the decoder disagree")
    guard let dictionary = decoded else { return 0 }
    guard let encoded = try? PropertyListCodec.encode(dictionary) else { return 0 }
    guard let again = try? PropertyListCodec.decodeDictionary(encoded) else {
        preconditionFailure("an encoded dictionary does not decode")
    }
    guard let reencoded = try? PropertyListCodec.encode(again) else {
        preconditionFailure("a decoded dictionary does not re-encode")
    }
    precondition(reencoded == encoded, "encoding is not stable across decode")
    return 0
}

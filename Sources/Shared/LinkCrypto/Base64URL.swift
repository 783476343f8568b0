#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Base64url without padding (RFC 7515, section 2), as JWTs use it.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let standard = Data(bytes).base64EncodedString().utf8
        return String(
            decoding: standard.compactMap { byte -> UInt8? in
                switch byte {
                case UInt8(ascii: "+"): return UInt8(ascii: "-")
                case UInt8(ascii: "/"): return UInt8(ascii: "_")
                case UInt8(ascii: "="): return nil
                default: return byte
                }
            }, as: UTF8.self)
    }

    /// The bytes of `text`, or `nil` when it holds anything but the base64url alphabet.
    public static func decode(_ text: Substring) -> [UInt8]? {
        guard text.utf8.allSatisfy({ isAlphabet($0) }), text.utf8.count % 4 != 1 else { return nil }
        var bytes = text.utf8.map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "-"): return UInt8(ascii: "+")
            case UInt8(ascii: "_"): return UInt8(ascii: "/")
            default: return byte
            }
        }
        bytes += Array(repeating: UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4)
        let standard = String(decoding: bytes, as: UTF8.self)
        guard let data = Data(base64Encoded: standard) else { return nil }
        return [UInt8](data)
    }

    private static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}

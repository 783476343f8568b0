import CSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkCrypto

/// A provider's TLS client certificate as APNs reads it: the app's bundle id in the subject's
/// `UID`, the environments it may connect to (the extensions `1.2.840.113635.100.6.3.1`,
/// development, and `.3.2`, production), and the topics it covers (`.3.6`: a SEQUENCE of each
/// topic's UTF8String followed by a SEQUENCE holding its kind: `app`, `voip`, `complication`).
/// A certificate without `.3.6` covers its `UID` only.
public struct ProviderCertificate: Sendable, Equatable {
    public static let developmentOID = "1.2.840.113635.100.6.3.1"
    public static let productionOID = "1.2.840.113635.100.6.3.2"
    public static let topicsOID = "1.2.840.113635.100.6.3.6"
    /// The kinds of topic a certificate covers, with their topic suffix: certificates serve
    /// "only a subset of push types" (no `fileprovider`, no `location`).
    public static let kinds: [(kind: String, suffix: String)] = [("app", ""), ("voip", ".voip"), ("complication", ".complication")]
    /// The push types a certificate connection may send: its topics' (the app's alerts and
    /// background pushes, VoIP, complications).
    public static let pushTypes: Set<APNsPushType> = [.alert, .background, .voip, .complication]

    public var bundleId: String
    public var topics: [String]
    public var environments: Set<APNsEnvironment>
    /// Why APNs would not take it (its chain does not lead to phoned's CA, it expired, ...): its
    /// requests are `BadCertificate`.
    public var problem: String?

    public init(bundleId: String, topics: [String], environments: Set<APNsEnvironment>, problem: String? = nil) {
        self.bundleId = bundleId
        self.topics = topics
        self.environments = environments
        self.problem = problem
    }

    /// Reads a peer certificate (an `X509 *`) and the handshake's verification result.
    init(certificate: OpaquePointer, verifyResult: Int) {
        bundleId = Self.subjectUID(certificate) ?? ""
        var environments: Set<APNsEnvironment> = []
        if Self.extensionData(certificate, Self.developmentOID) != nil { environments.insert(.development) }
        if Self.extensionData(certificate, Self.productionOID) != nil { environments.insert(.production) }
        self.environments = environments
        if let data = Self.extensionData(certificate, Self.topicsOID) {
            topics = Self.topics(fromDER: data)
        } else {
            topics = bundleId.isEmpty ? [] : [bundleId]
        }
        if verifyResult != Int(X509_V_OK) {
            problem = String(cString: X509_verify_cert_error_string(verifyResult))
        } else if bundleId.isEmpty {
            problem = "the certificate's subject has no UID (the app's bundle id)"
        }
    }

    // MARK: Reading

    private static func subjectUID(_ certificate: OpaquePointer) -> String? {
        guard let name = X509_get_subject_name(certificate) else { return nil }
        let index = X509_NAME_get_index_by_NID(name, NID_userId, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry),
            let bytes = ASN1_STRING_get0_data(data)
        else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))), as: UTF8.self)
    }

    /// The DER inside the extension `oid`, nil when the certificate has none.
    private static func extensionData(_ certificate: OpaquePointer, _ oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else { return nil }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(certificate, object, -1)
        guard index >= 0, let ext = X509_get_ext(certificate, index), let data = X509_EXTENSION_get_data(ext),
            let bytes = ASN1_STRING_get0_data(data)
        else { return nil }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))))
    }

    /// The topics of a `.3.6` value: its top-level UTF8Strings (each kind's SEQUENCE skipped).
    static func topics(fromDER bytes: [UInt8]) -> [String] {
        var reader = DERReader(bytes[...])
        guard let (tag, content) = reader.next(), tag == 0x30 else { return [] }
        var inner = DERReader(content)
        var topics: [String] = []
        while let (tag, value) = inner.next() {
            if tag == 0x0C { topics.append(String(decoding: value, as: UTF8.self)) }
        }
        return topics
    }

    // MARK: Writing

    /// The `.3.6` value for the bundle id and kinds: each kind's topic and its kind.
    static func topicsDER(bundleId: String, kinds: [String]) -> [UInt8] {
        var content: [UInt8] = []
        for kind in kinds {
            guard let suffix = Self.kinds.first(where: { $0.kind == kind })?.suffix else { continue }
            content += DER.element(0x0C, Array((bundleId + suffix).utf8))
            content += DER.element(0x30, DER.element(0x0C, Array(kind.utf8)))
        }
        return DER.element(0x30, content)
    }
}

/// Reads DER elements (tag, content) one after another; short and long lengths up to 4 bytes.
struct DERReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    mutating func next() -> (tag: UInt8, content: ArraySlice<UInt8>)? {
        guard bytes.count >= 2, let tag = bytes.first else { return nil }
        var index = bytes.startIndex + 1
        var length = Int(bytes[index])
        index += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard (1...4).contains(count), bytes.endIndex - index >= count else { return nil }
            length = 0
            for _ in 0..<count {
                length = length << 8 | Int(bytes[index])
                index += 1
            }
        }
        guard bytes.endIndex - index >= length else { return nil }
        let content = bytes[index..<index + length]
        bytes = bytes[(index + length)...]
        return (tag, content)
    }
}

enum DER {
    /// `tag`, the length, the content.
    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let count = content.count
        if count < 0x80 { return [tag, UInt8(count)] + content }
        if count <= 0xFF { return [tag, 0x81, UInt8(count)] + content }
        return [tag, 0x82, UInt8(count >> 8), UInt8(count & 0xFF)] + content
    }
}

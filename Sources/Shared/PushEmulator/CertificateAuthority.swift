import CSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkRuntime
import LinkSystem
import LinkCrypto

/// The endpoint's TLS identity: a self-signed CA and a server certificate it issued for
/// `localhost`, `127.0.0.1`, `::1` and Apple's APNs host names, made on first start (P-256)
/// and kept in a directory so clients trust the same CA across restarts.
public final class CertificateAuthority {
    /// The CA certificate that clients trust (`ca.pem`).
    public let caFile: String
    public let serverCertificateFile: String
    public let serverKeyFile: String
    let certificate: OpaquePointer
    let key: P256PrivateKey

    static let serverNames = ["localhost", "api.push.apple.com", "api.sandbox.push.apple.com", "api.development.push.apple.com"]

    /// Loads the identity in `directory`, or makes a new one there when it is missing, cannot
    /// be read, or the server certificate expires within 30 days.
    public static func loadOrCreate(directory: String, logger: Logger? = nil) throws -> CertificateAuthority {
        let paths = (
            ca: directory + "/ca.pem", caKey: directory + "/ca-key.pem",
            server: directory + "/server.pem", serverKey: directory + "/server-key.pem"
        )
        if let loaded = try? CertificateAuthority(caFile: paths.ca, serverFile: paths.server, serverKeyFile: paths.serverKey),
            loaded.isValid(forAnotherSeconds: 30 * 86_400)
        {
            return loaded
        }
        logger?.info("push: creating a certificate authority and a server certificate in \(directory)")
        let caKey = try P256PrivateKey()
        let ca = try makeCertificate(
            subject: "WatchLink Push Emulator CA", key: caKey, issuer: nil, issuerKey: caKey,
            days: 3650, isCA: true)
        defer { X509_free(ca) }
        let serverKey = try P256PrivateKey()
        let server = try makeCertificate(
            subject: "localhost", key: serverKey, issuer: ca, issuerKey: caKey,
            days: 397, isCA: false)
        defer { X509_free(server) }
        try FileSystem.writeFileAtomically(paths.caKey, Array(caKey.pkcs8PEM.utf8), mode: 0o600)
        try FileSystem.writeFileAtomically(paths.serverKey, Array(serverKey.pkcs8PEM.utf8), mode: 0o600)
        try FileSystem.writeFileAtomically(paths.server, Array(pem(server).utf8), mode: 0o644)
        try FileSystem.writeFileAtomically(paths.ca, Array(pem(ca).utf8), mode: 0o644)
        return try CertificateAuthority(caFile: paths.ca, serverFile: paths.server, serverKeyFile: paths.serverKey)
    }

    private init(caFile: String, serverFile: String, serverKeyFile: String) throws {
        self.caFile = caFile
        serverCertificateFile = serverFile
        self.serverKeyFile = serverKeyFile
        guard FileSystem.fileExists(caFile) else { throw OpenSSLError("\(caFile) is missing") }
        let text = String(decoding: try FileSystem.readFile(serverFile), as: UTF8.self)
        guard let certificate = MemoryBIO.withReading(text, { PEM_read_bio_X509($0, nil, nil, nil) }) ?? nil else {
            throw OpenSSLError("reading \(serverFile)")
        }
        self.certificate = certificate
        key = try P256PrivateKey(pem: String(decoding: try FileSystem.readFile(serverKeyFile), as: UTF8.self))
        guard X509_check_private_key(certificate, key.key) == 1 else {
            throw OpenSSLError("\(serverKeyFile) does not match \(serverFile)")
        }
    }

    deinit { X509_free(certificate) }

    func isValid(forAnotherSeconds seconds: Int) -> Bool {
        var limit = time(nil) + seconds
        return X509_cmp_time(X509_get0_notAfter(certificate), &limit) > 0
    }

    private static func pem(_ certificate: OpaquePointer) -> String {
        MemoryBIO.writing { PEM_write_bio_X509($0, certificate) } ?? ""
    }

    private static func makeCertificate(
        subject: String, key: P256PrivateKey, issuer: OpaquePointer?,
        issuerKey: P256PrivateKey, days: Int, isCA: Bool
    ) throws -> OpaquePointer {
        guard let certificate = X509_new() else { throw OpenSSLError("X509_new") }
        var ok = X509_set_version(certificate, 2) == 1
        var serial: Int64 = 0
        withUnsafeMutableBytes(of: &serial) { _ = RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 8) }
        ok = ok && ASN1_INTEGER_set_int64(X509_get_serialNumber(certificate), serial & 0x7fff_ffff_ffff_ffff | 1) == 1
        ok = ok && X509_gmtime_adj(X509_getm_notBefore(certificate), -86_400) != nil
        ok = ok && X509_gmtime_adj(X509_getm_notAfter(certificate), days * 86_400) != nil
        ok = ok && X509_set_pubkey(certificate, key.key) == 1
        let name = X509_get_subject_name(certificate)
        ok = ok && X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, "WatchLink", -1, -1, 0) == 1
        ok = ok && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, subject, -1, -1, 0) == 1
        ok = ok && X509_set_issuer_name(certificate, issuer.map { X509_get_subject_name($0) } ?? name) == 1
        let signer = issuer ?? certificate
        var extensions: [(Int32, String)] = [(NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always")]
        if isCA {
            extensions += [(NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign")]
        } else {
            let names = serverNames.map { "DNS:" + $0 } + ["IP:127.0.0.1", "IP:::1"]
            extensions += [
                (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "serverAuth"), (NID_subject_alt_name, names.joined(separator: ",")),
            ]
        }
        for (nid, value) in extensions where ok {
            ok = wl_x509_add_extension(certificate, signer, nid, value) == 1
        }
        ok = ok && X509_sign(certificate, issuerKey.key, EVP_sha256()) > 0
        guard ok else {
            X509_free(certificate)
            throw OpenSSLError("making the certificate for \(subject)")
        }
        return certificate
    }

    /// A server context with this identity, TLS 1.2 or later, and ALPN `h2`, asking clients
    /// for a certificate (not requiring one) and checking it against this CA.
    func makeServerContext() throws -> TLSServerContext {
        try TLSServerContext(certificate: certificate, key: key, clientCAFile: caFile)
    }

    /// A provider certificate, as Apple's Certificates page issues one for an app: subject
    /// `CN=Apple Push Services: <bundleId>`, `UID=<bundleId>`, `OU=<teamId>`; an extension for each
    /// environment it may connect to; its topics (`.3.6`). `validDays` below 0 makes one that
    /// has expired already.
    func issueProviderCertificate(
        bundleId: String, teamId: String, kinds: [String], environments: Set<APNsEnvironment>,
        validDays: Int
    ) throws -> (certificatePEM: String, privateKeyPEM: String) {
        let caKeyFile = String(caFile[..<(caFile.lastIndex(of: "/") ?? caFile.startIndex)]) + "/ca-key.pem"
        let caKey = try P256PrivateKey(pem: String(decoding: try FileSystem.readFile(caKeyFile), as: UTF8.self))
        let caText = String(decoding: try FileSystem.readFile(caFile), as: UTF8.self)
        guard let ca = MemoryBIO.withReading(caText, { PEM_read_bio_X509($0, nil, nil, nil) }) ?? nil else {
            throw OpenSSLError("reading \(caFile)")
        }
        defer { X509_free(ca) }
        let key = try P256PrivateKey()
        guard let certificate = X509_new() else { throw OpenSSLError("X509_new") }
        defer { X509_free(certificate) }
        var ok = X509_set_version(certificate, 2) == 1
        var serial: Int64 = 0
        withUnsafeMutableBytes(of: &serial) { _ = RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 8) }
        ok = ok && ASN1_INTEGER_set_int64(X509_get_serialNumber(certificate), serial & 0x7fff_ffff_ffff_ffff | 1) == 1
        ok = ok && X509_gmtime_adj(X509_getm_notBefore(certificate), validDays < 0 ? (validDays - 1) * 86_400 : -86_400) != nil
        ok = ok && X509_gmtime_adj(X509_getm_notAfter(certificate), validDays * 86_400) != nil
        ok = ok && X509_set_pubkey(certificate, key.key) == 1
        let name = X509_get_subject_name(certificate)
        ok = ok && X509_NAME_add_entry_by_NID(name, NID_userId, MBSTRING_UTF8, bundleId, -1, -1, 0) == 1
        ok = ok && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, "Apple Push Services: \(bundleId)", -1, -1, 0) == 1
        if !teamId.isEmpty { ok = ok && X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_UTF8, teamId, -1, -1, 0) == 1 }
        ok = ok && X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, "WatchLink", -1, -1, 0) == 1
        ok = ok && X509_set_issuer_name(certificate, X509_get_subject_name(ca)) == 1
        for (nid, value) in [
            (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "clientAuth"), (NID_authority_key_identifier, "keyid:always"),
        ] where ok {
            ok = wl_x509_add_extension(certificate, ca, nid, value) == 1
        }
        let null: [UInt8] = [0x05, 0x00]
        var raw: [(String, [UInt8])] = []
        if environments.contains(.development) { raw.append((ProviderCertificate.developmentOID, null)) }
        if environments.contains(.production) { raw.append((ProviderCertificate.productionOID, null)) }
        raw.append((ProviderCertificate.topicsOID, ProviderCertificate.topicsDER(bundleId: bundleId, kinds: kinds)))
        for (oid, der) in raw where ok {
            ok = Self.addRawExtension(certificate, oid: oid, der: der)
        }
        ok = ok && X509_sign(certificate, caKey.key, EVP_sha256()) > 0
        guard ok else { throw OpenSSLError("issuing a provider certificate for \(bundleId)") }
        return (Self.pem(certificate), key.pkcs8PEM)
    }

    /// Adds an extension whose value is `der`, not critical.
    private static func addRawExtension(_ certificate: OpaquePointer, oid: String, der: [UInt8]) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else { return false }
        defer { ASN1_OBJECT_free(object) }
        guard let data = ASN1_OCTET_STRING_new() else { return false }
        defer { ASN1_OCTET_STRING_free(data) }
        guard der.withUnsafeBufferPointer({ ASN1_OCTET_STRING_set(data, $0.baseAddress, Int32($0.count)) }) == 1,
            let ext = X509_EXTENSION_create_by_OBJ(nil, object, 0, data)
        else { return false }
        defer { X509_EXTENSION_free(ext) }
        return X509_add_ext(certificate, ext, -1) == 1
    }
}

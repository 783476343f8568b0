import CSSL
import Foundation
import TestSupport
import XCTest
@testable import PushEmulator
import LinkCrypto

/// A temporary directory for one test, removed at the end.
private func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/wl-tls-XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
    return String(cString: created)
}

/// The endpoint's certificates, checked by the `openssl` command (not WatchLink's code).
final class CertificateAuthorityTests: XCTestCase {
    private var directory = ""
    private let children = ChildProcesses()

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory()
    }

    override func tearDown() {
        children.killAll()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func openssl(_ arguments: [String]) throws -> ChildProcess.Outcome {
        let tool = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw XCTSkip("the openssl command is not installed (scripts/ensure-deps.sh installs it)")
        }
        return try children.run(tool, arguments, timeout: 60)
    }

    private func mode(_ path: String) throws -> Int {
        try XCTUnwrap((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    func testMakesACAAndAServerCertificateThatVerify() throws {
        let authority = try CertificateAuthority.loadOrCreate(directory: directory)
        XCTAssertEqual(authority.caFile, directory + "/ca.pem")
        XCTAssertEqual(try mode(directory + "/ca.pem"), 0o644)
        XCTAssertEqual(try mode(directory + "/server.pem"), 0o644)
        XCTAssertEqual(try mode(directory + "/ca-key.pem"), 0o600, "private keys are private")
        XCTAssertEqual(try mode(directory + "/server-key.pem"), 0o600, "private keys are private")

        for host in ["localhost", "api.push.apple.com"] {
            let verified = try openssl([
                "verify", "-purpose", "sslserver", "-verify_hostname", host, "-CAfile", authority.caFile,
                authority.serverCertificateFile,
            ])
            XCTAssertEqual(verified.status, 0, "\(host): \(verified.standardError)")
            XCTAssertEqual(verified.standardOutput, authority.serverCertificateFile + ": OK\n")
        }
        let otherHost = try openssl(["verify", "-verify_hostname", "example.com", "-CAfile", authority.caFile, authority.serverCertificateFile])
        XCTAssertNotEqual(otherHost.status, 0, "the certificate does not name example.com")
        let otherCA = try openssl(["verify", "-CAfile", authority.serverCertificateFile, authority.serverCertificateFile])
        XCTAssertNotEqual(otherCA.status, 0, "the server certificate is not self-signed: only the CA vouches for it")

        let names = try openssl(["x509", "-in", authority.serverCertificateFile, "-noout", "-ext", "subjectAltName,extendedKeyUsage,basicConstraints"])
        XCTAssertEqual(names.status, 0, names.standardError)
        for expected in [
            "DNS:localhost", "DNS:api.push.apple.com", "DNS:api.sandbox.push.apple.com",
            "DNS:api.development.push.apple.com", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1",
            "TLS Web Server Authentication", "CA:FALSE",
        ] {
            XCTAssertTrue(names.standardOutput.contains(expected), "\(expected) in:\n\(names.standardOutput)")
        }
        let ca = try openssl(["x509", "-in", authority.caFile, "-noout", "-ext", "basicConstraints,keyUsage"])
        XCTAssertTrue(ca.standardOutput.contains("CA:TRUE"), ca.standardOutput)
        XCTAssertTrue(ca.standardOutput.contains("Certificate Sign"), ca.standardOutput)
        let key = try openssl(["pkey", "-in", authority.serverKeyFile, "-noout", "-text"])
        XCTAssertTrue(key.standardOutput.contains("prime256v1") || key.standardOutput.contains("P-256"), key.standardOutput)
    }

    func testKeepsItsIdentityAcrossLoadsAndRemakesADamagedOne() throws {
        let first = try CertificateAuthority.loadOrCreate(directory: directory)
        let ca = try XCTUnwrap(FileManager.default.contents(atPath: first.caFile))
        let server = try XCTUnwrap(FileManager.default.contents(atPath: first.serverCertificateFile))
        let again = try CertificateAuthority.loadOrCreate(directory: directory)
        XCTAssertEqual(FileManager.default.contents(atPath: again.caFile), ca, "clients keep trusting the same CA")
        XCTAssertEqual(FileManager.default.contents(atPath: again.serverCertificateFile), server)

        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/server.pem", contents: Data("damaged".utf8)))
        let remade = try CertificateAuthority.loadOrCreate(directory: directory)
        XCTAssertNotEqual(FileManager.default.contents(atPath: remade.serverCertificateFile), server)
        let verified = try openssl(["verify", "-CAfile", remade.caFile, remade.serverCertificateFile])
        XCTAssertEqual(verified.status, 0, "the new server certificate is issued by the new CA: \(verified.standardError)")
    }
}

/// TLSStream, the server side, against an OpenSSL client set up here: it trusts only the
/// endpoint's CA, checks the host name and offers ALPN h2.
final class TLSStreamTests: XCTestCase {
    private var directory = ""
    private var client: OpaquePointer!
    private var clientContext: OpaquePointer!
    private var clientInput: OpaquePointer!
    private var clientOutput: OpaquePointer!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory()
    }

    override func tearDown() {
        if let client { SSL_free(client) }
        if let clientContext { SSL_CTX_free(clientContext) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func makeServer() throws -> (TLSStream, CertificateAuthority) {
        let authority = try CertificateAuthority.loadOrCreate(directory: directory)
        return (try TLSStream(context: try authority.makeServerContext()), authority)
    }

    private func makeClient(trusting caFile: String, host: String = "localhost", alpn: [UInt8] = [2, 0x68, 0x32]) throws {
        clientContext = try XCTUnwrap(SSL_CTX_new(TLS_client_method()))
        XCTAssertEqual(SSL_CTX_load_verify_locations(clientContext, caFile, nil), 1)
        SSL_CTX_set_verify(clientContext, SSL_VERIFY_PEER, nil)
        if !alpn.isEmpty {
            XCTAssertEqual(SSL_CTX_set_alpn_protos(clientContext, alpn, UInt32(alpn.count)), 0)
        }
        client = try XCTUnwrap(SSL_new(clientContext))
        XCTAssertEqual(SSL_set1_host(client, host), 1)
        clientInput = BIO_new(BIO_s_mem())
        clientOutput = BIO_new(BIO_s_mem())
        SSL_set_bio(client, clientInput, clientOutput)
        SSL_set_connect_state(client)
    }

    /// Carries records both ways until neither side has anything to send; the plaintext the
    /// server received.
    @discardableResult
    private func pump(_ server: TLSStream, rounds: Int = 20) throws -> [UInt8] {
        var received: [UInt8] = []
        for _ in 0..<rounds {
            if SSL_is_init_finished(client) != 1 { _ = SSL_do_handshake(client) }
            let toServer = MemoryBIO.drain(clientOutput)
            try toServer.withUnsafeBytes { bytes in
                try server.receive(bytes) { received += $0 }
            }
            let toClient = server.takeCiphertext()
            if !toClient.isEmpty {
                XCTAssertEqual(toClient.withUnsafeBytes { BIO_write(clientInput, $0.baseAddress, Int32($0.count)) }, Int32(toClient.count))
            }
            if toServer.isEmpty && toClient.isEmpty && SSL_is_init_finished(client) == 1 { break }
        }
        return received
    }

    private func clientRead() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { SSL_read(client, $0.baseAddress, Int32($0.count)) }
        return n > 0 ? Array(buffer[0..<Int(n)]) : []
    }

    func testHandshakeALPNAndDataBothWays() throws {
        let (server, authority) = try makeServer()
        try makeClient(trusting: authority.caFile)
        try pump(server)
        XCTAssertTrue(server.isHandshakeComplete)
        XCTAssertEqual(SSL_is_init_finished(client), 1)
        XCTAssertEqual(SSL_get_verify_result(client), Int(X509_V_OK), "the client trusts the endpoint's certificate for localhost")
        XCTAssertEqual(server.negotiatedProtocol, "h2")
        XCTAssertGreaterThanOrEqual(SSL_version(client), TLS1_2_VERSION)

        let hello = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        XCTAssertEqual(hello.withUnsafeBytes { SSL_write(client, $0.baseAddress, Int32($0.count)) }, Int32(hello.count))
        XCTAssertEqual(try pump(server), hello, "the server reads what the client wrote")

        let answer = [UInt8](repeating: 0x5A, count: 100_000)
        try answer.withUnsafeBytes { try server.send($0) }
        let records = server.takeCiphertext()
        XCTAssertFalse(records.contains(subsequence: [UInt8](repeating: 0x5A, count: 64)), "what goes out is encrypted")
        XCTAssertEqual(records.withUnsafeBytes { BIO_write(clientInput, $0.baseAddress, Int32($0.count)) }, Int32(records.count))
        var read: [UInt8] = []
        while read.count < answer.count {
            let piece = clientRead()
            if piece.isEmpty { break }
            read += piece
        }
        XCTAssertEqual(read, answer, "the client reads what the server sent")

        XCTAssertFalse(server.isClosedByPeer)
        _ = SSL_shutdown(client)
        try pump(server)
        XCTAssertTrue(server.isClosedByPeer, "close_notify from the client is seen")
    }

    /// ALPN (RFC 7301): a client offering only http/1.1 is refused with the
    /// no_application_protocol alert; one offering nothing gets no protocol named.
    func testALPNOtherThanH2IsRefusedAndNoALPNNamesNoProtocol() throws {
        let (server, authority) = try makeServer()
        try makeClient(trusting: authority.caFile, alpn: [8] + Array("http/1.1".utf8))
        XCTAssertThrowsError(try pump(server)) {
            XCTAssertTrue($0 is TLSStream.Failure, "\($0)")
            XCTAssertTrue("\($0)".contains("no application protocol"), "\($0)")
        }
        XCTAssertFalse(server.isHandshakeComplete)
        SSL_free(client)
        SSL_CTX_free(clientContext)

        let (plain, _) = try makeServer()
        try makeClient(trusting: authority.caFile, alpn: [])
        try pump(plain)
        XCTAssertTrue(plain.isHandshakeComplete)
        XCTAssertEqual(SSL_get_verify_result(client), Int(X509_V_OK))
        XCTAssertNil(plain.negotiatedProtocol)
    }

    func testGarbageIsATLSFailure() throws {
        let (server, _) = try makeServer()
        let garbage = [UInt8]("GET / HTTP/1.1\r\nhost: x\r\n\r\n".utf8)
        XCTAssertThrowsError(try garbage.withUnsafeBytes { try server.receive($0) { _ in } }) {
            XCTAssertTrue($0 is TLSStream.Failure, "\($0)")
            XCTAssertTrue("\($0)".contains("the TLS handshake"), "\($0)")
        }
        XCTAssertFalse(server.isHandshakeComplete)
    }
}

extension Array where Element == UInt8 {
    /// Whether `subsequence` (all one byte value) occurs: a run of that many equal bytes.
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard let byte = subsequence.first else { return true }
        var run = 0
        for element in self {
            run = element == byte ? run + 1 : 0
            if run == subsequence.count { return true }
        }
        return false
    }
}

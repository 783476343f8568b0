import Foundation
import LinkClient
import LinkControl
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// phoned's push feature through its control ops and its TCP endpoint. HTTP/2 clients drive
/// the endpoint in Tests/PushClients (pytest); here: the ops, restarts, options and a hostile socket.
final class PushIntegrationTests: DaemonTestCase {
    func testRegisterInvalidateAndKeysThroughControlOps() throws {
        let phone = try daemon("phoned").startAndWait()
        let events = try subscribed(phone)
        let c = try client(phone)
        XCTAssertEqual(try c.call("push.token")["token"], .null)
        let registered = try c.call("push.register", ["types": ["fileProvider"]])
        let token = try XCTUnwrap(registered["token"]?.stringValue)
        XCTAssertEqual(token.count, 64)
        XCTAssertTrue(token.allSatisfy(\.isHexDigit))
        let credentials = try events.waitForEvent("push.didUpdateCredentials", timeoutSeconds: 5)
        XCTAssertEqual(credentials.data["token"]?.stringValue, token)
        XCTAssertEqual(credentials.data["type"]?.stringValue, "fileProvider")

        let config = try c.call("push.config", ["bundleId": "com.example.files", "teamId": "TEAM123456"])
        XCTAssertEqual(config["fileProviderTopic"]?.stringValue, "com.example.files.pushkit.fileprovider")
        // Apple: "Refresh your token no more than once every 20 minutes"; what a user gets.
        XCTAssertEqual(config["tokenUpdateIntervalSeconds"], 1_200)
        let key = try c.call("push.keys.create")
        XCTAssertTrue(key["privateKeyPEM"]?.stringValue?.hasPrefix("-----BEGIN PRIVATE KEY-----") == true)
        let keyId = try XCTUnwrap(key["keyId"]?.stringValue)
        XCTAssertEqual(keyId.count, 10)
        XCTAssertEqual(try c.call("push.keys.list")["keyIds"], [.string(keyId)])

        let invalidated = try c.call("push.invalidate")
        XCTAssertEqual(invalidated["token"]?.stringValue, token)
        XCTAssertNotNil(invalidated["invalidatedAt"]?.intValue)
        _ = try events.waitForEvent("push.didInvalidateToken", timeoutSeconds: 5) { $0.data["token"]?.stringValue == token }
        XCTAssertEqual(try c.call("push.token")["token"], .null)
        assertControlError("control", 3) { try c.call("push.invalidate") }
        assertControlError("control", 3) { try c.call("push.register", ["types": ["alert"]]) }
        assertControlError("control", 3) { try c.call("push.inject", ["status": 200, "reason": "x"]) }
    }

    func testTokenKeysAndCertificateSurviveARestart() throws {
        let phone = try daemon("phoned").startAndWait()
        var c = try client(phone)
        let token = try c.call("push.register", ["types": ["fileProvider"]])["token"]
        let keyId = try c.call("push.keys.create")["keyId"]
        let endpoint = try c.call("push.endpoint")
        let caFile = try XCTUnwrap(endpoint["caFile"]?.stringValue)
        let ca = try XCTUnwrap(readTextFile(caFile))
        XCTAssertTrue(ca.hasPrefix("-----BEGIN CERTIFICATE-----"))
        phone.stop()
        try phone.startAndWait()
        c = try client(phone)
        XCTAssertEqual(try c.call("push.token")["token"], token)
        XCTAssertEqual(try c.call("push.keys.list")["keyIds"], [try XCTUnwrap(keyId)])
        XCTAssertEqual(readTextFile(caFile), ca)
        let status = try c.call("status")
        XCTAssertEqual(status[path: "push", "caFile"]?.stringValue, caFile)
        XCTAssertEqual(status[path: "push", "token"], token)
        XCTAssertGreaterThan(status[path: "push", "port"]?.intValue ?? 0, 0)
    }

    func testAPNsOptionsAreChecked() throws {
        // A bad value is a startup error (exit 1); an option no feature declares is a usage
        // error at parse time (exit 2), like any other unknown option.
        for (arguments, fragment, code) in [
            (["--apns-port", "70000"], "--apns-port must be an integer from 0 to 65535", Int32(1)),
            (["--apns-bogus", "1"], "unknown option '--apns-bogus'", Int32(2)),
        ] {
            let phone = daemon("phoned", home: makeDirectory(), arguments)
            try phone.start()
            XCTAssertEqual(phone.waitForExit(timeout: 10), code)
            XCTAssertTrue(phone.log.contains(fragment), phone.log)
        }
    }

    func testHostileSocketsLeaveBothDaemonsWorking() throws {
        let (phone, _) = try startPair(phoneArgs: ["--apns-handshake-timeout-ms", "300"])
        let c = try client(phone)
        let port = try XCTUnwrap(c.call("push.endpoint")["port"]?.intValue)
        let http1 = try TCPClient(port: UInt16(port))
        http1.send(Array("GET / HTTP/1.1\r\nhost: localhost\r\n\r\n".utf8))
        XCTAssertTrue(String(decoding: http1.readUntilClosed(timeout: 5), as: UTF8.self).hasPrefix("HTTP/1.1 505"))
        let silent = try TCPClient(port: UInt16(port))
        let halfTLS = try TCPClient(port: UInt16(port))
        halfTLS.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        let garbage = try TCPClient(port: UInt16(port))
        garbage.send(Array("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".utf8) + [UInt8](repeating: 0xff, count: 4096))
        _ = garbage.readUntilClosed(timeout: 5)
        _ = silent.readUntilClosed(timeout: 5)
        _ = halfTLS.readUntilClosed(timeout: 5)
        let stats = try c.call("push.stats")
        XCTAssertGreaterThanOrEqual(stats["timedOutConnections"]?.intValue ?? 0, 2)
        XCTAssertEqual(stats["connections"]?.intValue, 0)
        XCTAssertEqual(try c.call("status")[path: "link", "connected"], true)
    }
}

/// A blocking TCP client for loopback.
private final class TCPClient {
    let fd: Int32

    init(port: UInt16) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw NSError(domain: "tcp", code: Int(errno), userInfo: [NSLocalizedDescriptionKey: "connect to port \(port) failed"])
        }
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// What the server sends until it closes; fails the test when it does not close in time.
    func readUntilClosed(timeout: Double, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return received }
            received += buffer[0..<n]
        }
        XCTFail("the server kept the connection open for \(timeout) s", file: file, line: line)
        return received
    }
}

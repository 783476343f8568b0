import Foundation
import LinkClient
import LinkControl
import LinkJSON
import WireProtocol
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who may connect: file modes in HOME, the peer-uid check on every socket, and secrets that
/// never reach the logs.
final class AccessControlTests: DaemonTestCase {
    func testHomeSocketsAndPairingKeyArePrivate() throws {
        _ = try startPair()
        XCTAssertEqual(try mode(home), 0o700, "HOME")
        for name in ["link.sock", "phone.ctl", "watch.ctl", "pairing.key"] {
            XCTAssertEqual(try mode(home + "/" + name), 0o600, name)
        }
        for name in ["phone", "watch"] {
            XCTAssertEqual(try mode(home + "/" + name), 0o700, name)
        }
    }

    /// A client running as `nobody` cannot reach the sockets through HOME's mode, and when the
    /// modes are loosened by hand it is still refused by the peer-uid check of each socket.
    func testAnotherUserIsRefusedOnEverySocket() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            getpwnam("nobody") != nil
        else {
            throw XCTSkip("needs root, setpriv and a 'nobody' user to act as another uid")
        }
        let (phone, watch) = try startPair()
        let sockets = ["phone.ctl", "watch.ctl", "link.sock"].map { home + "/" + $0 }

        for result in try connectAsNobody(sockets) {
            XCTAssertTrue(result.hasPrefix("error "), "HOME 0700 keeps other users out: \(result)")
        }

        XCTAssertEqual(chmod(home, 0o711), 0)
        for path in sockets { XCTAssertEqual(chmod(path, 0o666), 0) }
        defer {
            for path in sockets { chmod(path, 0o600) }
            chmod(home, 0o700)
        }
        let results = try connectAsNobody(sockets)
        XCTAssertEqual(results.count, 3)
        for (path, result) in zip(sockets.prefix(2), results.prefix(2)) {
            XCTAssertTrue(result.hasPrefix("data "), "\(path): \(result)")
            XCTAssertTrue(result.contains("permission denied"), "\(path): \(result)")
            XCTAssertFalse(result.contains("\"ok\":true") || result.contains("\"ok\": true"), "\(path): \(result)")
        }
        XCTAssertEqual(results.last, "eof", "link.sock closes on another uid without a HELLO")
        eventually("the refusals to be logged") {
            phone.log.contains("control: refused a client of uid 65534") && phone.log.contains("link: refused a connection from uid 65534")
                && watch.log.contains("control: refused a client of uid 65534")
        }
        let p = try client(phone)
        XCTAssertEqual(try p.call("status")["link"]?["connected"]?.boolValue, true, "the real pair keeps its link")
    }

    func testPairingKeyAndTokenSecretsNeverReachTheLogs() throws {
        // The harness starts both daemons with --log-level debug.
        let (phone, watch, p, w) = try startActivatedPair()
        let instance: JSONObject = ["instanceId": "main"]
        var token = instance
        token["name"] = "possession"
        var send = token
        send["mode"] = "lazy"
        _ = try p.call("pa.instance.add", instance)
        _ = try w.call("pa.instance.add", instance)
        _ = try p.call("pa.activation.create", ["instanceId": "main", "commit": true])
        _ = try p.call("pa.status.sendToWatch", ["instanceId": "main", "mode": "lazy"])
        let created = try p.call("pa.token.create", token)
        let secret = try XCTUnwrap(created["tokenSecret"]?.stringValue)
        XCTAssertEqual(try p.call("pa.token.sendToWatch", send)["issued"], true)
        eventually("the token on the watch") {
            try w.call("pa.token.local", instance)["tokens"]?.arrayValue?.count == 1
        }
        let header = try w.call("pa.token.header", ["instanceId": "main", "name": "possession", "version": "3.2"])
        XCTAssertEqual(header["key"], "X-PowerAuth-Token")
        XCTAssertEqual(header["value"]?.stringValue?.contains("version=\"3.2\""), true, "\(header)")
        _ = try p.call("message.send", ["message": ["hello": "watch"]])

        let key = try XCTUnwrap(FileManager.default.contents(atPath: home + "/pairing.key"))
        let secretBytes = try XCTUnwrap(Data(base64Encoded: secret))
        let forbidden = [
            ("the pairing key (hex)", hex(key)), ("the pairing key (HEX)", hex(key).uppercased()),
            ("the pairing key (base64)", key.base64EncodedString()),
            ("the token secret (base64)", secret), ("the token secret (hex)", hex(secretBytes)),
            ("the token secret (HEX)", hex(secretBytes).uppercased()),
        ]
        let logs = phone.log + watch.log
        XCTAssertTrue(logs.contains("link: up"), "the logs were captured")
        for (what, text) in forbidden {
            XCTAssertFalse(logs.contains(text), "\(what) appears in a log")
        }
        for client in [p, w] {
            let received = JSON.serialize(.object(try client.call("received.list")))
            XCTAssertFalse(received.contains(secret), "the token secret appears in received.list")
        }
    }

    // MARK: - Helpers

    private func mode(_ path: String) throws -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw NSError(domain: "stat", code: Int(errno), userInfo: [NSLocalizedDescriptionKey: path]) }
        return info.st_mode & 0o777
    }

    private func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }

    /// For each path, as uid `nobody`: "error ERRNO" when connect fails, else "data TEXT" with
    /// what arrived within 3 s before EOF, or "eof" when nothing did.
    private func connectAsNobody(_ paths: [String]) throws -> [String] {
        let script = """
            import socket, sys
            for path in sys.argv[1:]:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(3)
                try:
                    s.connect(path)
                except OSError as e:
                    print("error", e.errno); continue
                data = b""
                try:
                    while True:
                        chunk = s.recv(4096)
                        if not chunk: break
                        data += chunk
                except OSError as e:
                    if data: data += b" (" + str(e).encode() + b")"
                print("data " + data.decode("utf-8", "replace").strip() if data else "eof")
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", script] + paths
        process.environment = ["PATH": "/usr/local/bin:/usr/bin:/bin"]
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "the client run as nobody failed")
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

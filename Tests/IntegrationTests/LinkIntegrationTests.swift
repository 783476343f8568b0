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

/// The handshake, refusals and the daemons' life cycle, with real processes.
final class LinkIntegrationTests: DaemonTestCase {
    private func writeKey(_ bytes: [UInt8], to home: String) throws {
        let path = home + "/pairing.key"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
    }

    func testWrongPairingKeyIsRefusedWhileTheRealPairKeepsWorking() throws {
        let (phone, _, p, _) = try startActivatedPair()
        let otherHome = makeDirectory()
        try writeKey([UInt8](repeating: 0xAB, count: 32), to: otherHome)
        let intruder = try daemon("watchd", home: otherHome, ["--link", home + "/link.sock", "--device-id", "intruder"])
            .startAndWait()
        eventually("phoned to log the refusal") { phone.log.contains("did not prove the pairing key") }
        eventually("the intruder to log why it was refused") {
            intruder.log.contains("authenticationFailed") && intruder.log.contains("pairing key")
        }
        XCTAssertEqual(try p.call("message.send", ["message": ["still": "working"], "wantsReply": true])["reply"], .object([:]))
        XCTAssertEqual(try p.call("status")[path: "link", "connected"], true)
    }

    func testASecondPhoneIsRefusedWithAReason() throws {
        let phone = try daemon("phoned").startAndWait()
        let fd = try UnixSocket.connectBlocking(path: home + "/link.sock")
        defer { close(fd) }
        let hello = Hello(
            minVersion: 1, maxVersion: 1, role: .phone, deviceId: "rogue-phone",
            nonce: [UInt8](repeating: 1, count: 32))
        try UnixSocket.writeAll(fd, FrameEncoder.encode(.hello(hello)))
        let frames = try UnixSocket.readFrames(
            fd,
            until: {
                if case .goAway = $0 { return true }; return false
            })
        guard case .goAway(let code, let reason)? = frames.last else { return XCTFail("\(frames)") }
        XCTAssertEqual(code, GoAwayCode.roleConflict.rawValue)
        XCTAssertTrue(reason.contains("phone"), reason)
        eventually("phoned to log it") { phone.log.contains("rogue-phone") }
        XCTAssertEqual(try client(phone).call("status")["role"], "phone")
    }

    func testGarbageOnTheLinkGetsAGoAwayAndTheDaemonKeepsServing() throws {
        let phone = try daemon("phoned").startAndWait()
        let fd = try UnixSocket.connectBlocking(path: home + "/link.sock")
        defer { close(fd) }
        try UnixSocket.writeAll(fd, [0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3])
        let frames = try UnixSocket.readFrames(
            fd,
            until: {
                if case .goAway = $0 { return true }; return false
            })
        guard case .goAway(let code, _)? = frames.last else { return XCTFail("\(frames)") }
        XCTAssertEqual(code, GoAwayCode.frameTooLarge.rawValue)
        XCTAssertEqual(try client(phone).call("status")["role"], "phone")
    }

    /// How fast they start and stop is measured by scripts/bench.sh; here only that they do.
    func testBothDaemonsStartAnswerAndStopOnSIGTERM() throws {
        for name in ["phoned", "watchd"] {
            let process = daemon(name)
            try process.start()
            try process.waitUntilReady(timeout: 60)
            process.signal(SIGTERM)
            XCTAssertEqual(process.waitForExit(timeout: 60), 0, "\(name) exits 0 on SIGTERM")
            XCTAssertEqual(process.process?.terminationReason, .exit, "\(name) exits, not killed by a signal")
            XCTAssertFalse(FileManager.default.fileExists(atPath: process.controlPath), "\(name) removes its control socket")
        }
    }

    func testHomeAndSocketsArePrivate() throws {
        _ = try startPair()
        var info = stat()
        XCTAssertEqual(stat(home, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        for file in ["link.sock", "phone.ctl", "watch.ctl", "pairing.key"] {
            XCTAssertEqual(stat(home + "/" + file, &info), 0, file)
            XCTAssertEqual(info.st_mode & 0o777, 0o600, file)
        }
    }

    func testStartupErrorsNameWhatWasWrong() throws {
        let longHome = makeDirectory() + "/" + String(repeating: "h", count: 100)
        let tooLong = daemon("phoned", home: longHome, logPath: makeDirectory() + "/toolong.log")
        try tooLong.start()
        XCTAssertEqual(tooLong.waitForExit(timeout: 5), 1)
        XCTAssertTrue(tooLong.log.contains(longHome + "/"), tooLong.log)
        XCTAssertTrue(tooLong.log.contains("limited to"), tooLong.log)

        let file = makeDirectory() + "/file"
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let notADirectory = daemon("phoned", home: file + "/home", logPath: makeDirectory() + "/notdir.log")
        try notADirectory.start()
        XCTAssertEqual(notADirectory.waitForExit(timeout: 5), 1)
        XCTAssertTrue(notADirectory.log.contains(file), notADirectory.log)

        try daemon("phoned").startAndWait()
        let second = daemon("phoned", logPath: home + "/phoned-second.log")
        try second.start()
        XCTAssertEqual(second.waitForExit(timeout: 5), 1)
        XCTAssertTrue(second.log.contains("already listening"), second.log)
    }

    func testLinkctlPrintsResultsAndFailsWithTheError() throws {
        _ = try startPair()
        let ok = try runLinkctl(["--home", home, "phone", "status"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        let parsed = try JSON.parse(Array(ok.stdout.utf8))
        XCTAssertEqual(parsed["role"], "phone")
        let activated = try runLinkctl(["--home", home, "watch", "session.activate"])
        XCTAssertEqual(activated.status, 0, activated.stderr)
        let failed = try runLinkctl(["--home", home, "watch", "message.send", "--json", #"{"message": {"a": 1}}"#])
        XCTAssertEqual(failed.status, 1)
        // The watch's own session is activated (so not 7004); the phone's is not, so the
        // counterpart is not reachable: 7007.
        XCTAssertTrue(failed.stderr.contains("7007"), failed.stderr)
        XCTAssertFalse(failed.stderr.contains("7004"), failed.stderr)
        let usage = try runLinkctl(["--home", home, "tablet", "status"])
        XCTAssertEqual(usage.status, 2)
    }

    private func runLinkctl(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let outcome = try children.run(Binaries.path("linkctl"), arguments)
        XCTAssertEqual(outcome.reason, .exit, "linkctl \(arguments) ends by itself")
        return (outcome.status, outcome.standardOutput, outcome.standardError)
    }
}

/// Blocking socket helpers for tests that play a rogue peer.
enum UnixSocket {
    static func connectBlocking(path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { close(fd); throw NSError(domain: "socket", code: Int(errno)) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw NSError(domain: "socket", code: Int(errno)) }
            offset += n
        }
    }

    /// The frames that have arrived, without waiting for more.
    static func readFramesNow(_ fd: Int32) throws -> [Frame] {
        var decoder = FrameDecoder()
        var frames: [Frame] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n <= 0 { return frames }
            decoder.append(buffer[0..<n])
            while let frame = try decoder.next() { frames.append(frame) }
        }
    }

    /// Reads frames until `stop` matches one, EOF, or the 5 s receive timeout.
    static func readFrames(_ fd: Int32, until stop: (Frame) -> Bool) throws -> [Frame] {
        var decoder = FrameDecoder()
        var frames: [Frame] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return frames }
            decoder.append(buffer[0..<n])
            while let frame = try decoder.next() {
                frames.append(frame)
                if stop(frame) { return frames }
            }
        }
    }
}

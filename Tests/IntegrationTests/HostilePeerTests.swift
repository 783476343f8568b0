import Foundation
import LinkClient
import LinkControl
import LinkJSON
import WireProtocol
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rogue processes on `link.sock` and on the control socket: each gets a clear error or a
/// closed connection, while the daemon keeps serving and the real pair keeps its link.
final class HostilePeerTests: DaemonTestCase {
    private var linkPath: String { home + "/link.sock" }

    // MARK: - link.sock

    func testGarbageOnTheLinkIsRefusedAndThePairKeepsItsLink() throws {
        let (phone, _) = try startPair()
        let garbage: [UInt8] = [0, 0, 0, 9, 0xEE] + Array("not a frame".utf8.prefix(8))
        let goAway = try rogueLinkExchange(send: garbage)
        XCTAssertEqual(goAway?.code, GoAwayCode.unknownFrameType.rawValue, "GOAWAY: \(String(describing: goAway))")
        try assertPairStillLinked(phone)
    }

    func testHugeLengthPrefixIsRefusedBeforeAllocating() throws {
        let (phone, _) = try startPair()
        let goAway = try rogueLinkExchange(send: [0xFF, 0xFF, 0xFF, 0xF0, 0x01])
        XCTAssertEqual(goAway?.code, GoAwayCode.frameTooLarge.rawValue, "GOAWAY: \(String(describing: goAway))")
        XCTAssertTrue(goAway?.reason.contains("4294967280") ?? false, "the reason names the declared length: \(String(describing: goAway))")
        try assertPairStillLinked(phone)
    }

    func testHalfAFrameThenSilenceTimesOutTheHandshake() throws {
        // The shipped 5 s, of the phone's clock: a manual clock moves through them.
        let (phone, _, p, _) = try startManualClockPair()
        let fd = try UnixSocket.connectBlocking(path: linkPath)
        defer { close(fd) }
        try UnixSocket.writeAll(fd, [0, 0, 0, 64, 0x01, 0x57, 0x4C])
        // The phone's HELLO: it accepted the connection and its handshake timer runs.
        let hello = try UnixSocket.readFrames(fd) { if case .hello = $0 { return true } else { return false } }
        XCTAssertEqual(hello.count, 1)
        try advance(p, 4_999)
        // Whatever the timer sends it sends before the phone answers the advance.
        XCTAssertTrue(try UnixSocket.readFramesNow(fd).isEmpty, "the handshake timer does not fire before its 5 s")
        try advance(p, 1)
        let frames = try UnixSocket.readFrames(fd) { if case .goAway = $0 { return true } else { return false } }
        guard case .goAway(let code, let reason)? = frames.last else { return XCTFail("no GOAWAY: \(frames)") }
        XCTAssertEqual(code, GoAwayCode.handshakeTimeout.rawValue)
        XCTAssertEqual(reason, "the handshake did not complete within 5000 ms")
        try assertPairStillLinked(phone)
    }

    func testFiveHundredConnectionsLeaveThePairLinkedAndThePhoneResponsive() throws {
        let (phone, _) = try startPair()
        let p = try client(phone)
        let rssBefore = try XCTUnwrap(residentKilobytes(phone.pid))
        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        for index in 0..<500 {
            guard let fd = try? UnixSocket.connectBlocking(path: linkPath) else { continue }
            fds.append(fd)
            // Half a HELLO: the phone holds the bytes until the handshake timer fires.
            if index % 2 == 0 { try? UnixSocket.writeAll(fd, [0, 0, 0, 80, 0x01, 0x57, 0x4C, 0x4E, 0x4B]) }
        }
        XCTAssertGreaterThan(fds.count, 400, "most connections are accepted by the kernel")
        XCTAssertEqual(
            try p.call("status", timeoutSeconds: 60)["link"]?["connected"]?.boolValue, true,
            "the phone answers while 500 peers hang")
        let rssDuring = try XCTUnwrap(residentKilobytes(phone.pid))
        if memoryIsMeasurable {
            XCTAssertLessThan(rssDuring - rssBefore, 64 * 1024, "500 idle connections cost less than 64 MiB (before \(rssBefore) kB, during \(rssDuring) kB)")
        }
        for fd in fds { close(fd) }
        fds.removeAll()
        try assertPairStillLinked(phone)
        XCTAssertEqual(try p.call("status")["link"]?["connected"]?.boolValue, true)
    }

    // MARK: - Control socket

    func testControlSocketAnswersBadInputAndKeepsServing() throws {
        let phone = try daemon("phoned").startAndWait()
        let fd = try UnixSocket.connectBlocking(path: phone.controlPath)
        defer { close(fd) }
        var reader = LineReader(fd: fd)

        func exchange(_ line: String) throws -> JSONObject {
            try UnixSocket.writeAll(fd, Array((line + "\n").utf8))
            let response = try XCTUnwrap(reader.nextLine(), "no response to \(line.prefix(80))")
            return try XCTUnwrap(JSON.parse(response).objectValue)
        }
        func assertError(_ line: String, _ name: String, file: StaticString = #filePath, lineNumber: UInt = #line) throws {
            let response = try exchange(line)
            XCTAssertEqual(response["ok"], false, "\(line)", file: file, line: lineNumber)
            XCTAssertEqual(response[path: "error", "domain"], "control", "\(line)", file: file, line: lineNumber)
            XCTAssertEqual(response[path: "error", "name"]?.stringValue, name, "\(line): \(response)", file: file, line: lineNumber)
            XCTAssertFalse(response[path: "error", "message"]?.stringValue?.isEmpty ?? true, file: file, line: lineNumber)
        }

        try assertError("{not json", "badRequest")
        try assertError("\u{1}\u{2}\u{ff}", "badRequest")
        try assertError("[1,2,3]", "badRequest")
        try assertError("{\"id\":1}", "badRequest")
        try assertError("{\"id\":1,\"op\":7}", "badRequest")
        try assertError("{\"id\":[1],\"op\":\"status\"}", "badRequest")
        try assertError("{\"id\":1,\"op\":\"status\",\"args\":5}", "badRequest")
        try assertError("{\"id\":1,\"op\":\"no.such.op\"}", "unknownOp")
        try assertError("{\"id\":1,\"op\":\"app.setState\",\"args\":{\"state\":42}}", "invalidArgument")
        try assertError("{\"id\":1,\"op\":\"message.send\",\"args\":{\"message\":\"text\"}}", "invalidArgument")
        try assertError(String(repeating: "[", count: 100_000), "badRequest")

        let status = try exchange("{\"id\":99,\"op\":\"status\"}")
        XCTAssertEqual(status["id"], 99)
        XCTAssertEqual(status["ok"], true)
    }

    func testTenMebibyteLineIsRefusedAndTheConnectionStaysUsable() throws {
        let phone = try daemon("phoned").startAndWait()
        let fd = try UnixSocket.connectBlocking(path: phone.controlPath)
        defer { close(fd) }
        var reader = LineReader(fd: fd)
        let rssBefore = try XCTUnwrap(residentKilobytes(phone.pid))
        var line = Array("{\"id\":1,\"op\":\"status\",\"args\":{\"x\":\"".utf8)
        line += [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20)
        line += Array("\"}}\n{\"id\":2,\"op\":\"status\"}\n".utf8)
        try UnixSocket.writeAll(fd, line)
        let refused = try XCTUnwrap(JSON.parse(XCTUnwrap(reader.nextLine())).objectValue)
        XCTAssertEqual(refused[path: "error", "name"], "lineTooLong", "\(refused)")
        let status = try XCTUnwrap(JSON.parse(XCTUnwrap(reader.nextLine())).objectValue)
        XCTAssertEqual(status["id"], 2)
        XCTAssertEqual(status["ok"], true)
        let rssAfter = try XCTUnwrap(residentKilobytes(phone.pid))
        if memoryIsMeasurable {
            XCTAssertLessThan(rssAfter - rssBefore, 8 * 1024, "the long line is dropped as it arrives, not buffered")
        }
    }

    func testClientsThatDisconnectMidRequestDoNotHurtTheDaemon() throws {
        let (phone, _) = try startPair()
        for index in 0..<50 {
            let fd = try UnixSocket.connectBlocking(path: phone.controlPath)
            switch index % 3 {
            case 0: try? UnixSocket.writeAll(fd, Array("{\"id\":1,\"op\":\"sta".utf8))
            case 1: try? UnixSocket.writeAll(fd, Array("{\"id\":1,\"op\":\"status\"}\n".utf8))
            default: try? UnixSocket.writeAll(fd, Array("{\"id\":1,\"op\":\"events.subscribe\"}\n{\"id\":2,\"op\":\"status\"}\n".utf8))
            }
            close(fd)
        }
        let p = try client(phone)
        XCTAssertEqual(try p.call("status")["link"]?["connected"]?.boolValue, true)
        try assertPairStillLinked(phone)
    }

    // MARK: - Helpers

    /// Connects to link.sock, sends `bytes`, and returns the GOAWAY the phone answers with.
    private func rogueLinkExchange(send bytes: [UInt8], receiveTimeoutSeconds: Int = 5) throws -> (code: UInt16, reason: String)? {
        let fd = try UnixSocket.connectBlocking(path: linkPath)
        defer { close(fd) }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        try UnixSocket.writeAll(fd, bytes)
        let frames = try UnixSocket.readFrames(fd) { if case .goAway = $0 { return true } else { return false } }
        for frame in frames {
            if case .goAway(let code, let reason) = frame { return (code, reason) }
        }
        return nil
    }

    private func assertPairStillLinked(_ phone: DaemonProcess, file: StaticString = #filePath, line: UInt = #line) throws {
        let p = try client(phone)
        let status = try p.call("status")
        XCTAssertEqual(status["link"]?["connected"]?.boolValue, true, "the real pair keeps its link: \(status)", file: file, line: line)
        XCTAssertFalse(phone.log.contains("link: down"), "the real link never dropped", file: file, line: line)
    }
}

/// The resident set size of a process in kB, from `/proc/PID/status` (Linux only).
func residentKilobytes(_ pid: Int32) -> Int? {
    guard let text = readTextFile("/proc/\(pid)/status") else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
    return nil
}

/// Reads `"\n"`-terminated lines from a blocking socket.
struct LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// The next line without its `"\n"`, or nil at EOF or on the receive timeout.
    mutating func nextLine() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return nil }
            buffer += chunk[0..<n]
        }
    }
}

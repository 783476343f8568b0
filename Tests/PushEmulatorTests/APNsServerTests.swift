import Foundation
import LinkRuntime
import XCTest
@testable import PushEmulator
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// APNsServer on its own loop thread, reached over real TCP connections with HTTP/2 written by
/// hand (see H2 in HTTP2ServerSessionTests): requests reach the handler, answers come back,
/// and connections over the limit are closed at once.
final class APNsServerTests: XCTestCase {
    /// What the loop thread owns, handed to it once.
    private final class Fixture: @unchecked Sendable {
        let loop: EventLoop
        let server: APNsServer
        let remote: EventLoop.Remote
        let requests = NSLock()
        var paths: [String] = []

        init(directory: String, maximumConnections: Int) throws {
            loop = try EventLoop()
            remote = try loop.makeRemote()
            var limits = APNsServerLimits()
            limits.maximumConnections = maximumConnections
            limits.handshakeTimeoutMilliseconds = 60_000
            let context = try CertificateAuthority.loadOrCreate(directory: directory).makeServerContext()
            var fixture: Fixture?
            server = APNsServer(
                loop: loop, logger: Logger(label: "apns-test", level: .error), host: "127.0.0.1",
                limits: limits, tlsContext: context
            ) { request, _, _ in
                fixture?.requests.withLock { fixture?.paths.append(request.path ?? "") }
                return APNsAnswer(response: APNsResponse(status: 200, apnsId: "0B1C7E3E-58A1-4C8B-9D1E-0A4A1F2B3C4D"))
            }
            fixture = self
        }

        /// Runs `body` on the loop's thread and waits for it.
        func onLoop<T>(_ body: @escaping () -> T) -> T? {
            let done = DispatchSemaphore(value: 0)
            let result = Locked<T?>(nil)
            let box = UncheckedBox(body)
            guard
                remote.execute({
                    result.set(box.value()); done.signal()
                })
            else { return nil }
            guard done.wait(timeout: .now() + 30) == .success else { return nil }
            return result.get()
        }
    }

    private final class UncheckedBox<T>: @unchecked Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }

    private final class Locked<T>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: T
        init(_ value: T) { self.value = value }
        func set(_ value: T) { lock.withLock { self.value = value } }
        func get() -> T { lock.withLock { value } }
    }

    private var directory = ""
    private var fixture: Fixture?
    private var loopThread: Thread?
    private let loopDone = DispatchSemaphore(value: 0)
    private var sockets: [Int32] = []

    override func setUpWithError() throws {
        var template = Array("/tmp/wl-apns-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
        directory = String(cString: created)
    }

    override func tearDown() {
        for fd in sockets { close(fd) }
        if let fixture {
            _ = fixture.remote.execute { [fixture] in
                fixture.server.stop()
                fixture.loop.stop()
            }
            XCTAssertEqual(loopDone.wait(timeout: .now() + 30), .success, "the loop thread ends")
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func startServer(maximumConnections: Int = 8) throws -> (Fixture, UInt16) {
        let fixture = try Fixture(directory: directory, maximumConnections: maximumConnections)
        try fixture.server.start(port: 0)
        let port = fixture.server.port
        self.fixture = fixture
        let done = loopDone
        let thread = Thread {
            try? fixture.loop.run()
            done.signal()
        }
        thread.start()
        loopThread = thread
        return (fixture, port)
    }

    private func connect(_ port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        sockets.append(fd)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return XCTFail("write failed: errno \(errno)") }
            offset += n
        }
    }

    /// Reads frames until `stop` holds for the frames so far, the peer closes, or 30 s pass.
    private func readFrames(_ fd: Int32, until stop: ([H2.Frame]) -> Bool) -> (frames: [H2.Frame], closed: Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while !stop(H2.frames(bytes)) {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return (H2.frames(bytes), true) }
            if n < 0 { return (H2.frames(bytes), errno == ECONNRESET) }
            bytes += buffer[0..<n]
        }
        return (H2.frames(bytes), false)
    }

    func testACleartextRequestReachesTheHandlerAndItsAnswerComesBack() throws {
        let (fixture, port) = try startServer()
        XCTAssertGreaterThan(port, 0, "an ephemeral port was chosen")
        let fd = try connect(port)
        let headers: [(String, String)] = [
            (":method", "POST"), (":scheme", "http"), (":path", "/3/device/abcd"),
            (":authority", "127.0.0.1"), ("apns-push-type", "fileprovider"),
        ]
        send(
            fd,
            H2.preface + H2.frame(H2.settings)
                + H2.frame(H2.headers, flags: H2.endHeaders, stream: 1, H2.headerBlock(headers))
                + H2.frame(H2.data, flags: H2.endStream, stream: 1, Array("{}".utf8)))
        let (frames, closed) = readFrames(fd) { $0.contains { $0.type == H2.headers && $0.stream == 1 } }
        XCTAssertFalse(closed, "\(frames)")
        let answer = try XCTUnwrap(frames.first { $0.type == H2.headers && $0.stream == 1 })
        XCTAssertEqual(answer.payload.first, 0x88, ":status 200")
        XCTAssertEqual(answer.flags & H2.endStream, H2.endStream)
        XCTAssertEqual(fixture.requests.withLock { fixture.paths }, ["/3/device/abcd"])
        XCTAssertEqual(fixture.onLoop { fixture.server.connectionCount }, 1)
        XCTAssertEqual(fixture.onLoop { fixture.server.acceptedConnections }, 1)
    }

    func testAtTheLimitTheLongestIdleConnectionMakesRoomWithAGoAway() throws {
        let (fixture, port) = try startServer(maximumConnections: 1)
        let first = try connect(port)
        send(first, H2.preface + H2.frame(H2.settings))
        // The server's SETTINGS: the first connection is being served, and it is idle.
        let (opening, _) = readFrames(first) { $0.contains { $0.type == H2.settings } }
        XCTAssertTrue(opening.contains { $0.type == H2.settings })
        let extra = try connect(port)
        send(extra, H2.preface + H2.frame(H2.settings))
        let (served, extraClosed) = readFrames(extra) { $0.contains { $0.type == H2.settings } }
        XCTAssertFalse(extraClosed, "the newcomer is served")
        XCTAssertTrue(served.contains { $0.type == H2.settings })
        let (goAway, _) = readFrames(first) { $0.contains { $0.type == H2.goAway } }
        let frame = try XCTUnwrap(goAway.first { $0.type == H2.goAway }, "the idle connection is told to go")
        XCTAssertEqual(Array(frame.payload[4..<8]), [0, 0, 0, 0], "NO_ERROR: the client may reconnect")
        XCTAssertEqual(fixture.onLoop { fixture.server.evictedConnections }, 1)
        XCTAssertEqual(fixture.onLoop { fixture.server.refusedConnections }, 0)
    }

    func testAtTheLimitWithEveryConnectionBusyTheNewcomerIsClosedAtOnce() throws {
        let (fixture, port) = try startServer(maximumConnections: 1)
        let first = try connect(port)
        // A request left open (no END_STREAM): the connection is busy and keeps its place.
        let headers: [(String, String)] = [
            (":method", "POST"), (":scheme", "http"), (":path", "/3/device/abcd"),
            (":authority", "127.0.0.1"), ("apns-push-type", "fileprovider"),
        ]
        send(
            first,
            H2.preface + H2.frame(H2.settings)
                + H2.frame(H2.headers, flags: H2.endHeaders, stream: 1, H2.headerBlock(headers)))
        let (opening, _) = readFrames(first) { $0.contains { $0.type == H2.settings } }
        XCTAssertTrue(opening.contains { $0.type == H2.settings })
        XCTAssertTrue(poll { fixture.onLoop { fixture.server.connectionCount } == 1 })
        let extra = try connect(port)
        let (frames, closed) = readFrames(extra) { _ in false }
        XCTAssertTrue(closed, "the connection over the limit is closed")
        XCTAssertEqual(frames, [], "without an answer")
        XCTAssertEqual(fixture.onLoop { fixture.server.refusedConnections }, 1)
        XCTAssertEqual(fixture.onLoop { fixture.server.evictedConnections }, 0)
        XCTAssertEqual(fixture.onLoop { fixture.server.connectionCount }, 1, "the busy connection stays")
        XCTAssertEqual(fixture.onLoop { fixture.server.goAwayAll(errorCode: 0, message: "maintenance") }, 1)
        let (goAway, _) = readFrames(first) { $0.contains { $0.type == H2.goAway } }
        XCTAssertEqual(goAway.first { $0.type == H2.goAway }?.payload.suffix(11), ArraySlice(Array("maintenance".utf8)))
    }

    /// Polls `condition` every 5 ms for up to 10 s.
    /// docs/push.md, "Limits against slow or malicious clients", as shipped: 256 connections
    /// are served side by side; the 257th takes one's place or is closed, never a 257th.
    func testTheShippedCapIs256Connections() throws {
        let (fixture, port) = try startServer(maximumConnections: APNsServerLimits().maximumConnections)
        for _ in 0..<256 {
            let fd = try connect(port)
            send(fd, H2.preface + H2.frame(H2.settings))
            XCTAssertTrue(readFrames(fd) { $0.contains { $0.type == H2.settings } }.frames.contains { $0.type == H2.settings })
        }
        XCTAssertEqual(fixture.onLoop { fixture.server.connectionCount }, 256)
        XCTAssertEqual(fixture.onLoop { fixture.server.evictedConnections + fixture.server.refusedConnections }, 0)
        let extra = try connect(port)
        send(extra, H2.preface + H2.frame(H2.settings))
        XCTAssertTrue(poll { fixture.onLoop { fixture.server.evictedConnections + fixture.server.refusedConnections } == 1 })
        XCTAssertTrue(poll { fixture.onLoop { fixture.server.connectionCount } == 256 }, "never 257")
    }

    /// The other defaults of that table, which no test waits out (five minutes of idleness):
    /// their behaviour is tested with small values set by the tests above and in
    /// Tests/PushClients; these are the values a user gets.
    func testTheShippedTimeoutsAndBuffersAreThoseOfPushMd() {
        XCTAssertEqual(APNsServerLimits().handshakeTimeoutMilliseconds, 10_000)
        XCTAssertEqual(APNsServerLimits().idleTimeoutMilliseconds, 300_000)
        XCTAssertEqual(APNsConnection.maximumQueuedOutput, 8 * 1_048_576)
        XCTAssertEqual(HTTP2ServerSession.maximumConcurrentStreams, 1_000)
    }

    private func poll(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if condition() { return true }
            usleep(5_000)
        }
        return false
    }
}

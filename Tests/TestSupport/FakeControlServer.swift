import Foundation
import LinkControl
import LinkJSON
import LinkSystem

/// A control socket that a test drives step by step from its own thread: accept, read the
/// next request, answer it (in any order), push events, hang up. No thread of its own, so
/// every step happens exactly when the test says.
public final class FakeControlServer {
    public let directory: String
    public let socketPath: String
    private let listener: Int32
    private var connections: [FakeConnection] = []

    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    public init(socketName: String = "phone.ctl") throws {
        directory = try FileSystem.makeTemporaryDirectory(prefix: "wlc-", in: "/tmp")
        socketPath = directory + "/" + socketName
        listener = try UnixSocket.listen(path: socketPath)
    }

    /// Accepts the next connection, waiting up to `timeout` seconds.
    public func accept(timeout: Double = 10) throws -> FakeConnection {
        try waitReadable(listener, timeout: timeout, what: "a connection to \(socketPath)")
        guard let fd = try UnixSocket.accept(listener) else { throw Failure(description: "no connection pending") }
        let connection = FakeConnection(fd: fd)
        connections.append(connection)
        return connection
    }

    /// Closes every connection and the listener, and removes the directory.
    public func stop() {
        connections.forEach { $0.close() }
        connections = []
        UnixSocket.close(listener)
        try? FileSystem.removeRecursively(directory)
    }
}

/// One request as the server read it.
public struct FakeRequest: CustomStringConvertible {
    public let id: JSONValue
    public let op: String
    public let args: JSONObject

    public var description: String { "\(op) \(args) (id \(id))" }
}

/// The server's end of one client connection.
public final class FakeConnection {
    private var fd: Int32
    private var framer = LineFramer(maximumLineLength: 64 << 20)
    private var lines: [[UInt8]] = []

    init(fd: Int32) {
        self.fd = fd
    }

    /// The next request, waiting up to `timeout` seconds.
    public func nextRequest(timeout: Double = 10) throws -> FakeRequest {
        let line = try nextLine(timeout: timeout)
        switch ControlCodec.parseRequest(line: line) {
        case .success(let request):
            return FakeRequest(id: request.id, op: request.op, args: request.args)
        case .failure(let failure):
            throw FakeControlServer.Failure(description: "bad request line \(String(decoding: line, as: UTF8.self)): \(failure.error)")
        }
    }

    /// The next request, which must be `op`.
    public func expect(_ op: String, timeout: Double = 10) throws -> FakeRequest {
        let request = try nextRequest(timeout: timeout)
        guard request.op == op else {
            throw FakeControlServer.Failure(description: "expected '\(op)', got \(request)")
        }
        return request
    }

    /// Whether the client closes the connection within `timeout` seconds, with no request first.
    public func waitForClose(timeout: Double = 10) throws -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while lines.isEmpty {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            try waitReadable(fd, timeout: remaining, what: "the client's close")
            if try !readSome() { return true }
        }
        return false
    }

    public func respond(to request: FakeRequest, _ result: JSONObject = [:]) {
        send(ControlCodec.success(id: request.id, result: result))
    }

    public func fail(_ request: FakeRequest, domain: String = "WCErrorDomain", code: Int, name: String, message: String) {
        send(ControlCodec.failure(id: request.id, error: ControlError(domain: domain, code: code, name: name, message: message)))
    }

    public func event(_ name: String, _ data: JSONObject = [:]) {
        send(ControlCodec.event(name: name, at: Date(), data: data))
    }

    public func send(_ bytes: [UInt8]) {
        guard fd >= 0 else { return }
        bytes.withUnsafeBytes { buffer in
            do { try Syscall.sendAll(fd, buffer) } catch {}
        }
    }

    /// Shuts the connection down: the client sees the daemon go away.
    public func hangUp() {
        if fd >= 0 { Syscall.shutdown(fd, 2) }
    }

    public func close() {
        if fd >= 0 { UnixSocket.close(fd) }
        fd = -1
    }

    private func nextLine(timeout: Double) throws -> [UInt8] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while lines.isEmpty {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw FakeControlServer.Failure(description: "no request within \(timeout) s") }
            try waitReadable(fd, timeout: remaining, what: "a request")
            guard try readSome() else { throw FakeControlServer.Failure(description: "the client closed the connection") }
        }
        return lines.removeFirst()
    }

    /// Reads what is there into `lines`; false at end of stream.
    private func readSome() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        let count = try buffer.withUnsafeMutableBytes { raw -> Int? in
            try SystemCalls.read(fd, into: raw).get()
        }
        guard let count else { return true }
        if count == 0 { return false }
        buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        while let output = framer.next() {
            if case .line(let line) = output { lines.append(line) }
        }
        return true
    }
}

/// Waits until `fd` is readable (or closed), up to `timeout` seconds.
private func waitReadable(_ fd: Int32, timeout: Double, what: String) throws {
    let poller = PollPoller()
    try poller.add(fd, .readable)
    let deadline = Date(timeIntervalSinceNow: timeout)
    while true {
        var ready = false
        let remaining = max(0, deadline.timeIntervalSinceNow)
        try poller.wait(timeoutMs: Int32(min(remaining * 1000, 60_000))) { _, _ in ready = true }
        if ready { return }
        if deadline.timeIntervalSinceNow <= 0 {
            throw FakeControlServer.Failure(description: "timed out waiting for \(what)")
        }
    }
}

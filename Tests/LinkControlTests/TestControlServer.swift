import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import LinkControl
import LinkJSON

/// A control-socket server for tests, listening in a fresh short directory under /tmp.
///
/// Ops: `echo` (returns op and args), `sleep` (answers after `ms` milliseconds, on its own
/// thread, with `tag`), `fail` (a WCErrorDomain error), `events.subscribe`, `emit` (sends
/// `count` events called `name` before answering), `hangUp` (closes without answering),
/// `garbage` (answers with a line that is not JSON). Anything else is `unknownOp`.
final class TestControlServer: @unchecked Sendable {
    let directory: String
    let socketPath: String

    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let group = DispatchGroup()
    private let lock = NSLock()
    private var connections: [Connection] = []
    private var stopped = false

    /// The ops received so far, in arrival order over all connections.
    let receivedOps = LockedBox<[String]>([])

    init(socketName: String = "phone.ctl") throws {
        var template = Array("/tmp/lct.XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(errno, "mkdtemp") }
        directory = String(cString: created)
        socketPath = directory + "/" + socketName

        listener = try Self.listeningSocket(at: socketPath)
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw POSIXError(errno, "pipe") }
        wakeRead = fds[0]
        wakeWrite = fds[1]

        group.enter()
        Thread { [self] in
            acceptLoop()
            group.leave()
        }.start()
    }

    /// How many connections have sent `events.subscribe`.
    var subscriberCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return connections.filter(\.isSubscribed).count
    }

    /// How many accepted connections are still open (a connection is counted until its peer closes it).
    var connectionCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return connections.count
    }

    /// Sends an event to every subscribed connection.
    func broadcast(_ name: String, _ data: JSONObject) {
        lock.lock()
        let targets = connections.filter(\.isSubscribed)
        lock.unlock()
        for connection in targets {
            connection.send(ControlCodec.event(name: name, at: Date(), data: data))
        }
    }

    /// Closes every accepted connection.
    func disconnectAll() {
        lock.lock()
        let targets = connections
        lock.unlock()
        targets.forEach { $0.shutdown() }
    }

    /// Stops accepting, closes every connection, waits for every thread and removes the directory.
    func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        disconnectAll()
        group.wait()
        close(listener)
        close(wakeRead)
        close(wakeWrite)
        unlink(socketPath)
        rmdir(directory)
    }

    deinit { stop() }

    private func acceptLoop() {
        while true {
            var fds = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 { return }
            let descriptor = accept(listener, nil, nil)
            if descriptor < 0 { continue }
            let connection = Connection(descriptor: descriptor, group: group, log: receivedOps)
            lock.lock()
            if stopped {
                lock.unlock()
                close(descriptor)
                return
            }
            connections.append(connection)
            lock.unlock()
            group.enter()
            Thread { [self] in
                connection.serve()
                lock.lock()
                connections.removeAll { $0 === connection }
                lock.unlock()
                group.leave()
            }.start()
        }
    }

    static func listeningSocket(at path: String) throws -> Int32 {
        #if os(Linux)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(errno, "socket") }
        var address = unixAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let error = POSIXError(errno, "bind/listen \(path)")
            close(descriptor)
            throw error
        }
        return descriptor
    }

    static func unixAddress(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        return address
    }

    /// One accepted connection, served on its own thread.
    final class Connection: @unchecked Sendable {
        private let descriptor: Int32
        private let group: DispatchGroup
        private let log: LockedBox<[String]>
        private let lock = NSLock()
        private var closed = false
        private var subscribed = false

        init(descriptor: Int32, group: DispatchGroup, log: LockedBox<[String]>) {
            self.descriptor = descriptor
            self.group = group
            self.log = log
        }

        var isSubscribed: Bool {
            lock.lock()
            defer { lock.unlock() }
            return subscribed && !closed
        }

        func serve() {
            var framer = LineFramer()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                while let output = framer.next() {
                    switch output {
                    case .line(let line): handle(line)
                    case .tooLong: send(ControlCodec.failure(id: nil, error: .control(.lineTooLong, "line too long")))
                    }
                }
            }
            lock.lock()
            closed = true
            close(descriptor)
            lock.unlock()
        }

        func send(_ bytes: [UInt8]) {
            #if os(Linux)
            let flags = Int32(MSG_NOSIGNAL)
            #else
            let flags: Int32 = 0
            #endif
            lock.lock()
            defer { lock.unlock() }
            guard !closed else { return }
            var offset = 0
            while offset < bytes.count {
                let sent = bytes.withUnsafeBytes { sendBytes(descriptor, $0.baseAddress! + offset, $0.count - offset, flags) }
                if sent < 0 && errno == EINTR { continue }
                if sent <= 0 { return }
                offset += sent
            }
        }

        func shutdown() {
            lock.lock()
            defer { lock.unlock() }
            if !closed { shutdownSocket(descriptor) }
        }

        private func handle(_ line: [UInt8]) {
            let request: ControlRequest
            switch ControlCodec.parseRequest(line: line) {
            case .success(let parsed):
                request = parsed
                log.modify { $0.append(parsed.op) }
            case .failure(let failure):
                send(failure.responseLine)
                return
            }
            switch request.op {
            case "echo":
                send(ControlCodec.success(id: request.id, result: ["op": .string(request.op), "args": .object(request.args)]))
            case "sleep":
                let milliseconds = request.args["ms"]?.intValue ?? 0
                group.enter()
                Thread { [self] in
                    usleep(useconds_t(milliseconds * 1000))
                    send(ControlCodec.success(id: request.id, result: ["slept": .int(milliseconds), "tag": request.args["tag"] ?? .null]))
                    group.leave()
                }.start()
            case "fail":
                send(
                    ControlCodec.failure(
                        id: request.id, error: ControlError(domain: "WCErrorDomain", code: 7007, name: "notReachable", message: "counterpart not reachable")))
            case "events.subscribe":
                lock.lock()
                subscribed = true
                lock.unlock()
                send(ControlCodec.success(id: request.id, result: [:]))
            case "emit":
                let name = request.args["name"]?.stringValue ?? "test.event"
                for sequence in 0..<(request.args["count"]?.intValue ?? 1) {
                    send(ControlCodec.event(name: name, at: Date(), data: ["sequence": .int(sequence)]))
                }
                send(ControlCodec.success(id: request.id, result: [:]))
            case "hangUp":
                shutdown()
            case "garbage":
                send(Array("this is not json\n".utf8))
            default:
                send(ControlCodec.failure(id: request.id, error: .control(.unknownOp, "unknown operation '\(request.op)'")))
            }
        }
    }
}

struct POSIXError: Error, CustomStringConvertible {
    let code: Int32
    let call: String

    init(_ code: Int32, _ call: String) {
        self.code = code
        self.call = call
    }

    var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// The number of open file descriptors of this process, where the platform tells.
func openDescriptorCount() -> Int? {
    #if os(Linux)
    return try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    #else
    return nil
    #endif
}

/// Polls `condition` until it holds or `seconds` pass.
func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(1000)
    }
    return true
}

private func sendBytes(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    #if canImport(Glibc)
    return Glibc.send(descriptor, pointer, count, flags)
    #else
    return Darwin.send(descriptor, pointer, count, flags)
    #endif
}

private func shutdownSocket(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    #else
    _ = Darwin.shutdown(descriptor, SHUT_RDWR)
    #endif
}

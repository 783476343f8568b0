import Foundation
import LinkControl
import LinkJSON

/// The state of one client connection, shared by the calling threads and the reader thread.
///
/// All mutable state is guarded by `condition`; writes are serialised by `writeLock`, which
/// also keeps the descriptor open while a write is in progress.
final class ControlConnection: @unchecked Sendable {
    /// The longest response or event line accepted from a daemon.
    static let maximumLineLength = 64 << 20

    private final class Waiter {
        var response: Result<JSONValue, ControlClientError>?
    }

    private let socket: ClientSocket
    private let condition = NSCondition()
    private let writeLock = NSLock()
    private let readerFinished = DispatchSemaphore(value: 0)

    private var nextId: Int64 = 1
    private var pending: [JSONValue: Waiter] = [:]
    private var rawWaiters: [Waiter] = []
    private var abandoned: Set<JSONValue> = []
    private var events = FIFOQueue<ControlEvent>()
    private var closedReason: ControlClientError?
    private var closeStarted = false
    private var descriptorOpen = true

    init(socket: ClientSocket) {
        self.socket = socket
    }

    func startReader() {
        let thread = Thread { [self] in
            readLoop()
            readerFinished.signal()
        }
        thread.name = "ControlClient reader"
        thread.start()
    }

    // MARK: Calls

    func exchange(timeoutSeconds: Double, what: String, line makeLine: (JSONValue) -> [UInt8]) throws -> JSONValue {
        let waiter = Waiter()
        condition.lock()
        if let closedReason {
            condition.unlock()
            throw closedReason
        }
        let id = JSONValue.int(nextId)
        nextId += 1
        pending[id] = waiter
        condition.unlock()

        do {
            try write(makeLine(id))
        } catch {
            condition.lock()
            pending[id] = nil
            condition.unlock()
            throw error
        }
        return try wait(for: waiter, deadline: Date(timeIntervalSinceNow: timeoutSeconds), what: what) {
            pending[id] = nil
            abandoned.insert(id)
        }
    }

    func exchangeRaw(_ line: [UInt8], timeoutSeconds: Double, what: String) throws -> JSONValue {
        let waiter = Waiter()
        condition.lock()
        if let closedReason {
            condition.unlock()
            throw closedReason
        }
        rawWaiters.append(waiter)
        condition.unlock()

        do {
            try write(line)
        } catch {
            condition.lock()
            rawWaiters.removeAll { $0 === waiter }
            condition.unlock()
            throw error
        }
        return try wait(for: waiter, deadline: Date(timeIntervalSinceNow: timeoutSeconds), what: what) {
            rawWaiters.removeAll { $0 === waiter }
        }
    }

    /// Waits for `waiter`'s response; on timeout runs `giveUp` with the lock held.
    private func wait(for waiter: Waiter, deadline: Date, what: String, giveUp: () -> Void) throws -> JSONValue {
        condition.lock()
        defer { condition.unlock() }
        while waiter.response == nil {
            if !condition.wait(until: deadline) && waiter.response == nil {
                giveUp()
                throw ControlClientError.timedOut(what)
            }
        }
        return try waiter.response!.get()
    }

    private func write(_ bytes: [UInt8]) throws {
        writeLock.lock()
        defer { writeLock.unlock() }
        guard descriptorOpen else {
            throw ControlClientError.connectionClosed("the client was closed")
        }
        try socket.writeAll(bytes)
    }

    // MARK: Events

    func nextEvent(deadline: Date) throws -> ControlEvent? {
        condition.lock()
        defer { condition.unlock() }
        while events.isEmpty {
            if let closedReason { throw closedReason }
            if !condition.wait(until: deadline) && events.isEmpty {
                if let closedReason { throw closedReason }
                return nil
            }
        }
        return events.popFirst()
    }

    // MARK: Closing

    func close() {
        condition.lock()
        let first = !closeStarted
        closeStarted = true
        condition.unlock()
        guard first else { return }

        socket.shutdown()
        readerFinished.wait()
        writeLock.lock()
        descriptorOpen = false
        socket.close()
        writeLock.unlock()
    }

    private func fail(_ reason: ControlClientError) {
        condition.lock()
        if closedReason == nil {
            closedReason = reason
        }
        for waiter in pending.values { waiter.response = .failure(reason) }
        for waiter in rawWaiters { waiter.response = .failure(reason) }
        pending.removeAll()
        rawWaiters.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Reading

    private func readLoop() {
        var framer = LineFramer(maximumLineLength: Self.maximumLineLength)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count: Int
            do {
                count = try socket.read(into: buffer)
            } catch let error as ControlClientError {
                fail(closeRequested ? .connectionClosed("the client was closed") : error)
                return
            } catch {
                fail(.connectionClosed("\(error)"))
                return
            }
            if count == 0 {
                fail(.connectionClosed(closeRequested ? "the client was closed" : "the daemon closed the connection"))
                return
            }
            framer.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            while let output = framer.next() {
                switch output {
                case .line(let line):
                    if let problem = dispatch(line) {
                        fail(.invalidResponse(problem))
                        socket.shutdown()
                        return
                    }
                case .tooLong(let length):
                    fail(.invalidResponse("a line of more than \(length) bytes, over the limit of \(Self.maximumLineLength)"))
                    socket.shutdown()
                    return
                }
            }
        }
    }

    private var closeRequested: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closeStarted
    }

    /// Hands one line to its waiter or the event queue; returns what is wrong with it, if anything.
    private func dispatch(_ line: [UInt8]) -> String? {
        let value: JSONValue
        do {
            value = try JSON.parse(line)
        } catch {
            return "\(error): \(String(decoding: line.prefix(200), as: UTF8.self))"
        }
        guard case .object(let object) = value else {
            return "a \(value.typeName) instead of an object: \(value)"
        }
        if let eventName = object["event"] {
            guard let name = eventName.stringValue, let at = object["at"]?.stringValue else {
                return "an event without a string 'event' and 'at': \(value)"
            }
            let data = object["data"]?.objectValue ?? [:]
            condition.lock()
            events.append(ControlEvent(name: name, at: at, data: data))
            condition.broadcast()
            condition.unlock()
            return nil
        }
        guard let id = object["id"] else {
            return "neither an 'event' nor an 'id': \(value)"
        }
        condition.lock()
        defer { condition.unlock() }
        if let waiter = pending.removeValue(forKey: id) {
            waiter.response = .success(value)
        } else if abandoned.remove(id) != nil {
            return nil
        } else if !rawWaiters.isEmpty {
            rawWaiters.removeFirst().response = .success(value)
        } else {
            return nil
        }
        condition.broadcast()
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkRuntime
import LinkSystem
import TestSupport
import XCTest

final class ConnectionTests: XCTestCase {
    /// Two connections over a socket pair with small kernel buffers, so writes are partial.
    private func makePair(_ loop: EventLoop, bufferSize: Int32 = 4096) throws -> (Connection, Connection) {
        let (a, b) = try UnixSocket.socketPair()
        for fd in [a, b] {
            try UnixSocket.setSendBufferSize(fd, bufferSize)
            try UnixSocket.setReceiveBufferSize(fd, bufferSize)
        }
        return (try Connection(loop: loop, fd: a), try Connection(loop: loop, fd: b))
    }

    private func echo(backend: PollerBackend, payload: [UInt8], pieces: [Int]?, vectorsPerWrite: Int = 0, seed: UInt64? = nil) throws {
        let label = seed.map { "\(backend), seed \($0)" } ?? "\(backend)"
        let loop = try EventLoop(backend: backend)
        let (client, server) = try makePair(loop)
        var received: [UInt8] = []
        received.reserveCapacity(payload.count)
        var maximumPending = 0
        var serverClose: [Connection.CloseReason] = []
        var clientClose: [Connection.CloseReason] = []

        server.onRead = { bytes in
            server.write(bytes)
            maximumPending = max(maximumPending, server.pendingWriteByteCount)
        }
        server.onClose = { reason in
            serverClose.append(reason)
            loop.stop()
        }
        client.onRead = { bytes in
            received.append(contentsOf: bytes)
            if received.count == payload.count {
                client.close()
            }
        }
        client.onClose = { clientClose.append($0) }

        if let pieces, vectorsPerWrite > 0 {
            // Groups of pieces, each group one vectored write; the pieces' buffers live only
            // during the call, as the contract allows.
            var offset = 0
            var index = 0
            while index < pieces.count {
                let group = pieces[index..<min(index + vectorsPerWrite, pieces.count)].map { size -> [UInt8] in
                    defer { offset += size }
                    return Array(payload[offset..<offset + size])
                }
                index += group.count
                let storage = group.map { bytes -> UnsafeMutableRawBufferPointer in
                    let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
                    copy.copyBytes(from: bytes)
                    return copy
                }
                let vectors = storage.map { iovec(iov_base: $0.baseAddress, iov_len: $0.count) }
                vectors.withUnsafeBufferPointer { client.write(vectors: $0) }
                for buffer in storage {
                    buffer.initializeMemory(as: UInt8.self, repeating: 0xEE)
                    buffer.deallocate()
                }
            }
            XCTAssertEqual(offset, payload.count)
        } else if let pieces {
            var offset = 0
            for size in pieces {
                client.write(Array(payload[offset..<offset + size]))
                offset += size
            }
            XCTAssertEqual(offset, payload.count)
        } else {
            client.write(payload)
        }
        maximumPending = max(maximumPending, client.pendingWriteByteCount)
        XCTAssertGreaterThan(client.pendingWriteByteCount, 0, "\(label): the first write should be partial")

        try runLoop(loop, limitMs: 30_000, "\(label)")
        XCTAssertEqual(received.count, payload.count, "\(label)")
        XCTAssertTrue(received == payload, "\(label): echoed bytes differ")
        XCTAssertGreaterThan(maximumPending, 0)
        XCTAssertEqual(clientClose, [.local], "\(label)")
        XCTAssertEqual(serverClose, [.eof], "\(label)")
        XCTAssertFalse(client.isOpen)
        XCTAssertFalse(server.isOpen)
    }

    /// Random sizes from 1 to `maximum` that add up to `total`.
    private func randomPieces(of total: Int, atMost maximum: Int, seed: UInt64) -> [Int] {
        var pieces: [Int] = []
        var remaining = total
        var generator = SeededGenerator(seed: seed)
        while remaining > 0 {
            let size = min(remaining, Int.random(in: 1...maximum, using: &generator))
            pieces.append(size)
            remaining -= size
        }
        return pieces
    }

    func testEchoesFourMebibytesInOneWrite() throws {
        let payload = patternBytes(count: 4 << 20)
        for backend in availableBackends {
            try echo(backend: backend, payload: payload, pieces: nil)
        }
    }

    func testEchoesFourMebibytesInManySmallWrites() throws {
        let payload = patternBytes(count: 4 << 20, seed: 7)
        let seed = testSeed(default: 20_000)
        let pieces = randomPieces(of: payload.count, atMost: 20_000, seed: seed)
        for backend in availableBackends {
            try echo(backend: backend, payload: payload, pieces: pieces, seed: seed)
        }
    }

    func testVectoredWritesArriveInOrderAcrossPartialWrites() throws {
        let payload = patternBytes(count: 1 << 20, seed: 11)
        let seed = testSeed(default: 9_000)
        let pieces = randomPieces(of: payload.count, atMost: 9_000, seed: seed)
        for backend in availableBackends {
            try echo(backend: backend, payload: payload, pieces: pieces, vectorsPerWrite: 7, seed: seed)
        }
    }

    func testCloseAfterFlushDeliversEverythingThenCloses() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (sender, receiver) = try makePair(loop)
            let payload = patternBytes(count: 1 << 20, seed: 3)
            var received: [UInt8] = []
            var senderClose: [Connection.CloseReason] = []
            var receiverClose: [Connection.CloseReason] = []
            var readsAfterClose = 0
            sender.onRead = { _ in readsAfterClose += 1 }
            sender.onClose = { senderClose.append($0) }
            receiver.onRead = { received.append(contentsOf: $0) }
            receiver.onClose = { reason in
                receiverClose.append(reason)
                loop.schedule(afterMilliseconds: 20) { loop.stop() }
            }

            sender.write(payload)
            XCTAssertGreaterThan(sender.pendingWriteByteCount, 0)
            sender.closeAfterFlush()
            XCTAssertTrue(sender.isOpen, "still flushing")
            sender.write([1, 2, 3])
            receiver.write([9, 9, 9])

            try runLoop(loop, "\(backend)")
            XCTAssertTrue(received == payload, "\(backend): \(received.count) of \(payload.count) bytes")
            XCTAssertEqual(senderClose, [.local], "\(backend)")
            XCTAssertEqual(receiverClose, [.eof], "\(backend)")
            XCTAssertEqual(readsAfterClose, 0, "reading stops at closeAfterFlush")
            XCTAssertEqual(sender.pendingWriteByteCount, 0)
        }
    }

    func testCloseAfterFlushWithNothingQueuedClosesAtOnce() throws {
        let loop = try EventLoop()
        let (a, b) = try makePair(loop)
        var reasons: [Connection.CloseReason] = []
        a.onClose = { reasons.append($0) }
        a.closeAfterFlush()
        XCTAssertEqual(reasons, [.local])
        XCTAssertFalse(a.isOpen)
        b.close()
    }

    func testEndOfFileClosesExactlyOnce() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (a, b) = try UnixSocket.socketPair()
            let connection = try Connection(loop: loop, fd: a)
            var reasons: [Connection.CloseReason] = []
            var received: [UInt8] = []
            connection.onRead = { received.append(contentsOf: $0) }
            connection.onClose = { reason in
                reasons.append(reason)
                loop.schedule(afterMilliseconds: 30) { loop.stop() }
            }
            XCTAssertEqual(writeRaw(b, [1, 2, 3]), 3)
            UnixSocket.close(b)
            let turnsBefore = loop.turnCount
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(received, [1, 2, 3], "\(backend)")
            XCTAssertEqual(reasons, [.eof], "\(backend)")
            XCTAssertFalse(connection.isOpen)
            XCTAssertLessThan(loop.turnCount - turnsBefore, 10, "\(backend): no spinning after EOF")
            connection.close()
            XCTAssertEqual(reasons, [.eof], "close after EOF reports nothing more")
        }
    }

    func testWriteToAClosedPeerFailsOnceWithAnError() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (a, b) = try UnixSocket.socketPair()
            let connection = try Connection(loop: loop, fd: a)
            connection.pauseReading()
            var reasons: [Connection.CloseReason] = []
            connection.onClose = { reason in
                reasons.append(reason)
                loop.stop()
            }
            UnixSocket.close(b)
            connection.write([1, 2, 3])
            connection.write([4, 5, 6])
            XCTAssertFalse(connection.isOpen, "\(backend)")
            XCTAssertTrue(reasons.isEmpty, "reported from the loop, not from inside write")
            try runLoop(loop, "\(backend)")
            guard reasons.count == 1, case .error(let error) = reasons[0] else {
                return XCTFail("\(backend): \(reasons)")
            }
            XCTAssertTrue([Errno.brokenPipe, .connectionReset].contains(error.errno), "\(error)")
        }
    }

    func testPauseAndResumeReading() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (a, b) = try makePair(loop)
            var received: [UInt8] = []
            b.pauseReading()
            b.onRead = { bytes in
                received.append(contentsOf: bytes)
                loop.stop()
            }
            a.write([1, 2, 3, 4])
            var receivedWhilePaused = -1
            loop.schedule(afterMilliseconds: 30) {
                receivedWhilePaused = received.count
                b.resumeReading()
            }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(receivedWhilePaused, 0, "\(backend)")
            XCTAssertEqual(received, [1, 2, 3, 4], "\(backend)")
            a.close()
            b.close()
        }
    }

    func testCloseInsideOnReadStopsDelivery() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (a, b) = try makePair(loop, bufferSize: 256 * 1024)
            var reads = 0
            var reasons: [Connection.CloseReason] = []
            b.onRead = { _ in
                reads += 1
                b.close()
            }
            b.onClose = { reason in
                reasons.append(reason)
                loop.schedule(afterMilliseconds: 20) { loop.stop() }
            }
            a.write(patternBytes(count: 200_000))
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(reads, 1, "\(backend)")
            XCTAssertEqual(reasons, [.local], "\(backend)")
            a.close()
        }
    }

    func testPausedConnectionWhosePeerHangsUpDoesNotSpin() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (a, b) = try UnixSocket.socketPair()
            let connection = try Connection(loop: loop, fd: a)
            connection.pauseReading()
            UnixSocket.close(b)
            let before = loop.turnCount
            loop.schedule(afterMilliseconds: 50) { loop.stop() }
            try runLoop(loop, "\(backend)")
            XCTAssertLessThan(loop.turnCount - before, 10, "\(backend)")
            XCTAssertTrue(connection.isOpen)
            var reasons: [Connection.CloseReason] = []
            connection.onClose = {
                reasons.append($0); loop.stop()
            }
            connection.resumeReading()
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(reasons, [.eof])
        }
    }

    func testNoDescriptorIsLeftOpen() throws {
        #if os(Linux)
        // Descriptors of the kinds this module opens, by number; the test runtime's own
        // (Dispatch's epoll and timerfd) come and go independently.
        func ours() throws -> [String: String] {
            var result: [String: String] = [:]
            for name in try FileSystem.directoryEntries("/proc/self/fd") {
                var buffer = [UInt8](repeating: 0, count: 256)
                let length = readlink("/proc/self/fd/" + name, &buffer, 255)
                guard length > 0 else { continue }
                let target = String(decoding: buffer[0..<length], as: UTF8.self)
                if target.hasPrefix("socket:") || target.hasPrefix("pipe:")
                    || target.contains("[signalfd]") || target.contains("[eventfd]")
                {
                    result[name] = target
                }
            }
            return result
        }
        let before = try ours()
        weak var released: EventLoop?
        for backend in availableBackends {
            try echo(backend: backend, payload: patternBytes(count: 100_000), pieces: nil)
            try {
                let loop = try EventLoop(backend: backend)
                released = loop
                _ = try loop.makeRemote()
                try loop.onSignals([SIGUSR2]) { _ in }
                let (a, b) = try makePair(loop)
                a.onClose = { _ in loop.stop() }
                b.closeAfterFlush()
                try runLoop(loop)
            }()
            XCTAssertNil(released, "\(backend): the loop is released once its connections are closed")
        }
        XCTAssertEqual(try ours(), before)
        #endif
    }

    func testCloseAfterFlushInsideOnReadLeavesTheReadBytesIntact() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (a, b) = try makePair(loop, bufferSize: 256 * 1024)
            var seen: [UInt8] = []
            var expected: [UInt8] = []
            b.onRead = { bytes in
                expected = Array(bytes)
                b.closeAfterFlush()
                seen = Array(bytes)
            }
            a.onClose = { _ in loop.stop() }
            a.write(patternBytes(count: 150_000, seed: 5))
            try runLoop(loop, "\(backend)")
            XCTAssertFalse(expected.isEmpty)
            XCTAssertTrue(seen == expected, "\(backend): the buffer changed under onRead")
        }
    }
}

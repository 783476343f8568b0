#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import LinkRuntime
import LinkSystem
import XCTest

final class EventLoopTests: XCTestCase {
    private func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(fd, &buffer, buffer.count) > 0 {}
    }

    func testUnwatchInsideAHandlerSuppressesLaterEventsOfTheSameBatch() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let pairs = try (0..<4).map { _ in try UnixSocket.socketPair() }
            var dispatched: [Int32] = []
            for (fd, peer) in pairs {
                XCTAssertEqual(writeRaw(peer, [1]), 1)
                try loop.watch(fd, events: .readable) { _ in
                    dispatched.append(fd)
                    for (other, _) in pairs { loop.unwatch(other) }
                    loop.execute { loop.stop() }
                }
            }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(dispatched.count, 1, "\(backend): \(dispatched)")
            for (fd, peer) in pairs {
                XCTAssertNil(loop.interest(fd))
                UnixSocket.close(fd)
                UnixSocket.close(peer)
            }
        }
    }

    func testReusedDescriptorNumberDoesNotGetAStaleEvent() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            var open: Set<Int32> = []
            let first = try UnixSocket.socketPair()
            let second = try UnixSocket.socketPair()
            open.formUnion([first.0, first.1, second.0, second.1])
            XCTAssertEqual(writeRaw(first.1, [1]), 1)
            XCTAssertEqual(writeRaw(second.1, [1]), 1)
            var staleDeliveries = 0
            var reusedNumber = false
            var replaced = false
            // Whichever handler runs first closes the other pair and opens a new one, which
            // gets the freed numbers; the other pair's event of this batch must not reach it.
            func handler(own: (Int32, Int32), other: (Int32, Int32)) -> (PollEvents) -> Void {
                return { _ in
                    self.drain(own.0)
                    loop.execute { loop.stop() }
                    guard !replaced else { return }
                    replaced = true
                    loop.unwatch(other.0)
                    UnixSocket.close(other.0)
                    UnixSocket.close(other.1)
                    open.subtract([other.0, other.1])
                    guard let fresh = try? UnixSocket.socketPair() else { return XCTFail("socketpair") }
                    open.formUnion([fresh.0, fresh.1])
                    reusedNumber = fresh.0 == other.0 || fresh.1 == other.0
                    for fd in [fresh.0, fresh.1] {
                        do {
                            try loop.watch(fd, events: .readable) { _ in staleDeliveries += 1 }
                        } catch {
                            XCTFail("\(error)")
                        }
                    }
                }
            }
            try loop.watch(first.0, events: .readable, handler(own: first, other: second))
            try loop.watch(second.0, events: .readable, handler(own: second, other: first))
            try runLoop(loop, "\(backend)")
            XCTAssertTrue(reusedNumber, "\(backend): the test needs the number reused")
            XCTAssertEqual(staleDeliveries, 0, "\(backend)")
            for fd in open {
                loop.unwatch(fd)
                UnixSocket.close(fd)
            }
        }
    }

    func testInteractiveDescriptorsAreServedFirstInATurn() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let pairs = try (0..<6).map { _ in try UnixSocket.socketPair() }
            var dispatched: [Int32] = []
            // Ready in this order: four normal descriptors, then the interactive ones.
            let interactive = Set(pairs.suffix(2).map(\.0))
            for (fd, peer) in pairs {
                XCTAssertEqual(writeRaw(peer, [1]), 1)
                try loop.watch(fd, events: .readable, priority: interactive.contains(fd) ? .interactive : .normal) { _ in
                    self.drain(fd)
                    dispatched.append(fd)
                    if dispatched.count == pairs.count { loop.execute { loop.stop() } }
                }
            }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(dispatched.count, pairs.count, "\(backend): \(dispatched)")
            XCTAssertEqual(Set(dispatched.prefix(2)), interactive, "\(backend): \(dispatched)")
            for (fd, peer) in pairs {
                loop.unwatch(fd)
                UnixSocket.close(fd)
                UnixSocket.close(peer)
            }
        }
    }

    func testUnwatchOwnDescriptorInsideItsHandler() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (fd, peer) = try UnixSocket.socketPair()
            XCTAssertEqual(writeRaw(peer, [1]), 1)
            var calls = 0
            try loop.watch(fd, events: .readable) { _ in
                calls += 1
                loop.unwatch(fd)
            }
            loop.schedule(afterMilliseconds: 30) { loop.stop() }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(calls, 1, "\(backend): level-triggered data left unread, but unwatched")
            UnixSocket.close(fd)
            UnixSocket.close(peer)
        }
    }

    func testWatchingTwiceFails() throws {
        let loop = try EventLoop()
        let (fd, peer) = try UnixSocket.socketPair()
        defer { loop.unwatch(fd); UnixSocket.close(fd); UnixSocket.close(peer) }
        try loop.watch(fd, events: .readable) { _ in }
        XCTAssertThrowsError(try loop.watch(fd, events: .readable) { _ in }) {
            XCTAssertEqual(($0 as? SystemError)?.errno, .fileExists, "\($0)")
        }
        XCTAssertThrowsError(try loop.updateInterest(peer, events: .readable)) {
            XCTAssertEqual(($0 as? SystemError)?.errno, .badFileDescriptor, "an unwatched descriptor: \($0)")
        }
    }

    func testInterestChangesAndEmptyInterestIsNotPolled() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (fd, peer) = try UnixSocket.socketPair()
            var seen: [PollEvents] = []
            try loop.watch(fd, events: []) { events in
                seen.append(events)
                try? loop.updateInterest(fd, events: [])
                loop.stop()
            }
            UnixSocket.close(peer)
            loop.schedule(afterMilliseconds: 30) { loop.stop() }
            let before = loop.turnCount
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(seen, [], "\(backend): not polled while the interest is empty")
            XCTAssertLessThan(loop.turnCount - before, 5)

            try loop.updateInterest(fd, events: .writable)
            XCTAssertEqual(loop.interest(fd), .writable)
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(seen.count, 1, "\(backend)")
            XCTAssertTrue(seen.first.map { !$0.isDisjoint(with: [.writable, .hangup, .error]) } ?? false, "\(seen)")
            loop.unwatch(fd)
            UnixSocket.close(fd)
        }
    }

    func testTurnOrderHandlersTimersWorkHooks() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let (fd, peer) = try UnixSocket.socketPair()
            var log: [String] = []
            var hookTurns: [UInt64] = []
            loop.afterTurn {
                hookTurns.append(loop.turnCount)
                if !log.isEmpty { log.append("hook") }
            }
            try loop.watch(fd, events: .readable) { _ in
                self.drain(fd)
                log.append("handler")
                let turn = loop.turnCount
                loop.execute {
                    log.append(loop.turnCount == turn ? "work(same turn)" : "work(later turn)")
                    loop.execute {
                        log.append(loop.turnCount == turn ? "nested(same turn)" : "nested(later turn)")
                        loop.stop()
                    }
                }
            }
            loop.schedule(afterMilliseconds: 10) {
                log.append("timer")
                XCTAssertEqual(writeRaw(peer, [1]), 1)
            }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(
                log,
                ["timer", "hook", "handler", "work(same turn)", "hook", "nested(later turn)", "hook"],
                "\(backend)"
            )
            XCTAssertEqual(hookTurns.count, Set(hookTurns).count, "one hook call a turn")
            loop.unwatch(fd)
            UnixSocket.close(fd)
            UnixSocket.close(peer)
        }
    }

    func testRemovedAfterTurnHookStopsRunning() throws {
        let loop = try EventLoop()
        var calls = 0
        let id = loop.afterTurn { calls += 1 }
        loop.execute {}
        loop.schedule(afterMilliseconds: 5) { loop.removeAfterTurn(id) }
        loop.schedule(afterMilliseconds: 20) { loop.stop() }
        try runLoop(loop)
        let afterRemoval = calls
        loop.schedule(afterMilliseconds: 5) { loop.stop() }
        try runLoop(loop)
        XCTAssertEqual(calls, afterRemoval)
        XCTAssertGreaterThan(calls, 0)
    }

    /// Hooks changed by hooks: one that removes itself and the one after it is not called
    /// again (the one after it not even in that turn), one added in a turn's hooks first runs
    /// in the next turn, and what the removed ones captured is released.
    func testHooksAddedAndRemovedByHooks() throws {
        final class Capture {
            let onDeinit: () -> Void
            init(_ onDeinit: @escaping () -> Void) { self.onDeinit = onDeinit }
            deinit { onDeinit() }
        }
        let loop = try EventLoop()
        var log: [String] = []
        var released: [String] = []
        var turns = 0
        var second: EventLoop.AfterTurnID?
        var first: EventLoop.AfterTurnID?
        do {
            let firstCapture = Capture { released.append("first") }
            let secondCapture = Capture { released.append("second") }
            first = loop.afterTurn {
                withExtendedLifetime(firstCapture) { log.append("first") }
                loop.removeAfterTurn(first!)
                loop.removeAfterTurn(second!)
                loop.afterTurn { log.append("added") }
            }
            second = loop.afterTurn { withExtendedLifetime(secondCapture) { log.append("second") } }
        }
        loop.afterTurn {
            log.append("third")
            turns += 1
            if turns == 3 { loop.stop() } else { loop.execute {} }
        }
        loop.execute {}
        try runLoop(loop)
        XCTAssertEqual(log, ["first", "third", "third", "added", "third", "added"])
        XCTAssertEqual(released.sorted(), ["first", "second"], "removed hooks let go of what they hold")
    }

    func testStopBeforeRunAndRunAgain() throws {
        let loop = try EventLoop()
        var ran = 0
        loop.execute {
            ran += 1; loop.stop()
        }
        try runLoop(loop)
        loop.execute {
            ran += 1; loop.stop()
        }
        try runLoop(loop)
        XCTAssertEqual(ran, 2)
        XCTAssertFalse(loop.isRunning)
    }

    func testRemoteExecuteAndStopFromAnotherThread() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let remote = try loop.makeRemote()
            let box = ValuesBox()
            Thread.detachNewThread {
                for value in 0..<100 {
                    remote.execute { box.append(value) }
                }
                remote.stop()
            }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(box.values, Array(0..<100), "\(backend)")
        }
    }

    func testRemoteOutlivingItsLoopIsHarmless() throws {
        var loop: EventLoop? = try EventLoop()
        let remote = try loop!.makeRemote()
        loop = nil
        XCTAssertFalse(remote.execute {})
        remote.stop()
    }

    func testEnvironmentSelectsThePoller() {
        let saved = getenv(PollerBackend.environmentVariable).map { String(cString: $0) }
        defer {
            if let saved { setenv(PollerBackend.environmentVariable, saved, 1) } else { unsetenv(PollerBackend.environmentVariable) }
        }
        setenv(PollerBackend.environmentVariable, "poll", 1)
        XCTAssertEqual(PollerBackend.default, .poll)
        setenv(PollerBackend.environmentVariable, "nonsense", 1)
        #if os(Linux)
        XCTAssertEqual(PollerBackend.default, .epoll)
        #else
        XCTAssertEqual(PollerBackend.default, .poll)
        #endif
    }
}

/// Values appended on the loop's thread only; the lock-free box is read on the same thread.
private final class ValuesBox: @unchecked Sendable {
    var values: [Int] = []
    func append(_ value: Int) { values.append(value) }
}

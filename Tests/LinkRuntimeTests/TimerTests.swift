#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkRuntime
import LinkSystem
import TestSupport
import XCTest

final class TimerTests: XCTestCase {
    func testTimersFireInDeadlineOrderWithFIFOForEqualDeadlines() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            var fired: [String] = []
            loop.schedule(afterMilliseconds: 30) { fired.append("30") }
            loop.schedule(afterMilliseconds: 10) { fired.append("10a") }
            loop.schedule(afterMilliseconds: 20) { fired.append("20") }
            loop.schedule(afterMilliseconds: 0) { fired.append("0") }
            loop.schedule(afterMilliseconds: 40) {
                fired.append("40"); loop.stop()
            }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(fired, ["0", "10a", "20", "30", "40"], "\(backend)")
        }
    }

    func testEqualDeadlinesFireInSchedulingOrder() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            var fired: [Int] = []
            // The same delay scheduled back to back may land on one deadline or on rising ones;
            // either way the order must be the scheduling order.
            for index in 0..<100 {
                loop.schedule(afterMilliseconds: 5) { fired.append(index) }
            }
            loop.schedule(afterMilliseconds: 20) { loop.stop() }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(fired, Array(0..<100), "\(backend)")
        }
    }

    func testCancelledTimersDoNotFire() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            var fired: [String] = []
            let cancelled = loop.schedule(afterMilliseconds: 5) { fired.append("cancelled") }
            var sameTurn: EventLoop.TimerID?
            loop.schedule(afterMilliseconds: 10) {
                fired.append("canceller")
                if let sameTurn { loop.cancel(sameTurn) }
            }
            sameTurn = loop.schedule(afterMilliseconds: 10) { fired.append("sameTurn") }
            loop.cancel(cancelled)
            loop.cancel(cancelled)
            loop.schedule(afterMilliseconds: 30) {
                fired.append("last"); loop.stop()
            }
            XCTAssertEqual(loop.pendingTimerCount, 3)
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(fired, ["canceller", "last"], "\(backend)")
            XCTAssertEqual(loop.pendingTimerCount, 0)
        }
    }

    func testCancellingAFiredTimerIsHarmless() throws {
        let loop = try EventLoop()
        var count = 0
        let timer = loop.schedule(afterMilliseconds: 0) {
            count += 1; loop.stop()
        }
        try runLoop(loop)
        loop.cancel(timer)
        XCTAssertEqual(count, 1)
        XCTAssertEqual(loop.pendingTimerCount, 0)
    }

    func testTimerScheduledFromAHandler() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            var fired: [String] = []
            let start = loop.nowMilliseconds
            var innerAt: Int64 = 0
            loop.schedule(afterMilliseconds: 10) {
                fired.append("outer")
                loop.schedule(afterMilliseconds: 15) {
                    fired.append("inner")
                    innerAt = loop.nowMilliseconds
                    loop.stop()
                }
            }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(fired, ["outer", "inner"], "\(backend)")
            XCTAssertGreaterThanOrEqual(innerAt - start, 25, "\(backend)")
        }
    }

    func testZeroDelayTimersRunWithoutBlockingAndNotInTheSameTurnWhenScheduledFromATimer() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            var turns: [UInt64] = []
            loop.schedule(afterMilliseconds: 0) {
                turns.append(loop.turnCount)
                loop.schedule(afterMilliseconds: 0) {
                    turns.append(loop.turnCount)
                    loop.schedule(afterMilliseconds: -5) {
                        turns.append(loop.turnCount)
                        loop.stop()
                    }
                }
            }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(turns.count, 3, "\(backend)")
            XCTAssertTrue(zip(turns, turns.dropFirst()).allSatisfy { $0 < $1 }, "\(backend): \(turns)")
        }
    }

    func testPollTimeoutFollowsTheNearestTimerWithoutBusyLooping() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let turnsBefore = loop.turnCount
            let start = loop.nowNanoseconds
            var elapsed: UInt64 = 0
            loop.schedule(afterMilliseconds: 50) {
                elapsed = loop.nowNanoseconds - start
                loop.stop()
            }
            try runLoop(loop, "\(backend)")
            let turns = loop.turnCount - turnsBefore
            XCTAssertLessThan(turns, 10, "\(backend): \(turns) turns for one 50 ms timer")
            XCTAssertGreaterThanOrEqual(elapsed, 50_000_000, "\(backend): fired early")
        }
    }

    func testNearestTimerWinsOverALaterOne() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            let start = loop.nowMilliseconds
            var firedAt: Int64 = 0
            loop.schedule(afterMilliseconds: 5_000) { XCTFail("late timer fired") }
            loop.schedule(afterMilliseconds: 20) {
                firedAt = loop.nowMilliseconds
                loop.stop()
            }
            try runLoop(loop, "\(backend)")
            XCTAssertGreaterThanOrEqual(firedAt - start, 20, "\(backend)")
        }
    }

    /// The loop waits without a timeout and is woken at the nearest deadline (on Linux by a
    /// timer descriptor, set only when a nearer deadline comes). Cancelling the timer it was
    /// set for, or scheduling a nearer one after it was set, must not move any timer.
    func testTheWakeUpFollowsCancelledAndNearerTimers() throws {
        for backend in availableBackends {
            // The first wait is set for `cancelled`; a descriptor ready at once cancels it in
            // that turn: `next` fires at its own time, neither early nor late by much.
            let loop = try EventLoop(backend: backend)
            let (fd, peer) = try UnixSocket.socketPair()
            XCTAssertEqual(writeRaw(peer, [1]), 1)
            let start = loop.nowNanoseconds
            let cancelled = loop.schedule(afterMilliseconds: 30) { XCTFail("a cancelled timer fired") }
            var firedAfter: UInt64 = 0
            loop.schedule(afterMilliseconds: 60) {
                firedAfter = loop.nowNanoseconds - start
                loop.stop()
            }
            let turnsBefore = loop.turnCount
            try loop.watch(fd, events: .readable) { _ in
                var byte: UInt8 = 0
                _ = read(fd, &byte, 1)
                loop.cancel(cancelled)
            }
            try runLoop(loop, "\(backend)")
            XCTAssertGreaterThanOrEqual(firedAfter, 60_000_000, "\(backend): fired early")
            XCTAssertLessThan(loop.turnCount - turnsBefore, 10, "\(backend): the loop turned without cause")

            // The first wait is set for `late`; a timer scheduled in that turn for much earlier
            // wakes the loop at its own deadline, not at the later one.
            XCTAssertEqual(writeRaw(peer, [1]), 1)
            let again = loop.nowNanoseconds
            loop.schedule(afterMilliseconds: 5_000) { XCTFail("the late timer fired") }
            var nearFiredAfter: UInt64 = 0
            loop.unwatch(fd)
            try loop.watch(fd, events: .readable) { _ in
                var byte: UInt8 = 0
                _ = read(fd, &byte, 1)
                loop.schedule(afterMilliseconds: 10) {
                    nearFiredAfter = loop.nowNanoseconds - again
                    loop.stop()
                }
            }
            try runLoop(loop, "\(backend)")
            XCTAssertGreaterThanOrEqual(nearFiredAfter, 10_000_000, "\(backend): fired early")
            XCTAssertLessThan(nearFiredAfter, 2_500_000_000, "\(backend): the nearer timer waited for the later one")
            loop.unwatch(fd)
            UnixSocket.close(fd)
            UnixSocket.close(peer)
        }
    }

    func testManyTimersFireOnceEachAndNeverEarly() throws {
        let loop = try EventLoop()
        let seed = testSeed(default: 0x7133)
        var generator = SeededGenerator(seed: seed)
        var fired = 0
        var early = 0
        var ids: [EventLoop.TimerID] = []
        for _ in 0..<2_000 {
            let delay = Int64.random(in: 0...40, using: &generator)
            let due = loop.nowNanoseconds + UInt64(delay) * 1_000_000
            ids.append(
                loop.schedule(afterMilliseconds: delay) {
                    fired += 1
                    if loop.nowNanoseconds < due { early += 1 }
                })
        }
        for (index, id) in ids.enumerated() where index % 3 == 0 {
            loop.cancel(id)
        }
        loop.schedule(afterMilliseconds: 60) { loop.stop() }
        try runLoop(loop)
        XCTAssertEqual(fired, 2_000 - (2_000 + 2) / 3, "seed \(seed)")
        XCTAssertEqual(early, 0, "seed \(seed)")
    }
}

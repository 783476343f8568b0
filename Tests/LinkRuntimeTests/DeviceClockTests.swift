import Foundation
import LinkRuntime
import LinkSystem
import XCTest

/// The device clock of a loop: the system's by default, or a manual one that moves only when
/// told, with the device timers that follow it and the real-time timers that do not.
final class DeviceClockTests: XCTestCase {
    func testTheSystemClockReadsTheSystemsClocks() throws {
        let loop = try EventLoop()
        XCTAssertEqual(loop.clock.mode, .system)
        XCTAssertEqual(loop.clock, .system)
        XCTAssertLessThanOrEqual(abs(loop.nowMilliseconds - loop.realMilliseconds), 1)
        let wall = Int64(Date().timeIntervalSince1970 * 1000)
        XCTAssertLessThanOrEqual(abs(loop.wallMilliseconds - wall), 50)
        XCTAssertLessThanOrEqual(abs(loop.wallMicroseconds / 1000 - loop.wallMilliseconds), 1)
        XCTAssertNil(loop.nextDeviceTimerMilliseconds, "under the system clock the loop's wait fires device timers")
    }

    func testAManualClockStandsStillUntilMovedAndItsWallClockMovesWithIt() throws {
        let loop = try EventLoop()
        loop.useManualClock(.manual(monotonicNanoseconds: 5_000_000_000, wallNanoseconds: 1_798_761_540_000_000_000))
        XCTAssertTrue(loop.clock.isManual)
        XCTAssertEqual(loop.nowMilliseconds, 5_000)
        XCTAssertEqual(loop.turnMilliseconds, 5_000)
        XCTAssertEqual(loop.wallMilliseconds, 1_798_761_540_000)
        usleep(20_000)
        XCTAssertEqual(loop.nowMilliseconds, 5_000, "real time passing does not move it")
        XCTAssertEqual(loop.wallMilliseconds, 1_798_761_540_000)

        loop.advanceClock(toMilliseconds: 65_000)
        XCTAssertEqual(loop.nowMilliseconds, 65_000)
        XCTAssertEqual(loop.turnMilliseconds, 65_000, "the turn's time follows a move")
        XCTAssertEqual(loop.wallMilliseconds, 1_798_761_600_000, "the wall clock moves with it")

        loop.setWallClock(milliseconds: 1_000)
        XCTAssertEqual(loop.wallMilliseconds, 1_000, "a set moves the wall clock")
        XCTAssertEqual(loop.nowMilliseconds, 65_000, "and leaves monotonic time")
        loop.moveClock(toMilliseconds: 60_000)
        XCTAssertEqual(loop.nowMilliseconds, 65_000, "monotonic time never goes back")
        loop.moveClock(toMilliseconds: 65_500)
        XCTAssertEqual(loop.wallMilliseconds, 1_500)
    }

    func testDeviceTimersWaitForTheManualClockAndRealTimeTimersDoNot() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            loop.useManualClock(.manualFromSystem())
            var fired: [String] = []
            loop.schedule(afterMilliseconds: 0) { fired.append("device 0") }
            loop.schedule(afterMilliseconds: 5) { fired.append("device 5") }
            loop.schedule(afterMilliseconds: 5, on: .device) { fired.append("device 5 too") }
            loop.schedule(afterMilliseconds: 30, on: .realTime) {
                fired.append("real 30")
                loop.stop()
            }
            let started = loop.realMilliseconds
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(fired, ["device 0", "real 30"], "\(backend): a timer due at the clock's time fires, the others wait")
            XCTAssertGreaterThanOrEqual(loop.realMilliseconds - started, 29, "\(backend): the real-time timer waited its time")
            XCTAssertEqual(loop.pendingTimerCount, 2, "\(backend)")
            XCTAssertEqual(loop.nextDeviceTimerMilliseconds, loop.nowMilliseconds + 5, "\(backend)")
            loop.advanceClock(toMilliseconds: loop.nowMilliseconds + 5)
            XCTAssertEqual(fired, ["device 0", "real 30", "device 5", "device 5 too"], "\(backend)")
            XCTAssertEqual(loop.pendingTimerCount, 0, "\(backend)")
        }
    }

    func testAnAdvanceFiresTimersInDeadlineOrderEachAtItsOwnTime() throws {
        let loop = try EventLoop()
        loop.useManualClock(.manual(monotonicNanoseconds: 1_000_000_000, wallNanoseconds: 0))
        var fired: [(String, Int64, Int64)] = []
        func note(_ name: String) { fired.append((name, loop.nowMilliseconds - 1_000, loop.wallMilliseconds)) }
        loop.schedule(afterMilliseconds: 30) { note("30") }
        loop.schedule(afterMilliseconds: 10) {
            note("10")
            // Scheduled within the advance, due within it: it fires in its place.
            loop.schedule(afterMilliseconds: 15) { note("10+15") }
            XCTAssertEqual(loop.turnMilliseconds, 1_010, "a timer sees its own time")
        }
        loop.schedule(afterMilliseconds: 20) { note("20") }
        loop.schedule(afterMilliseconds: 86_400_000) { note("a day") }
        loop.advanceClock(toMilliseconds: 1_100)
        XCTAssertEqual(fired.map(\.0), ["10", "20", "10+15", "30"])
        XCTAssertEqual(fired.map(\.1), [10, 20, 25, 30])
        XCTAssertEqual(fired.map(\.2), [10, 20, 25, 30], "the wall clock reads each timer's time")
        XCTAssertEqual(loop.nowMilliseconds, 1_100)
        XCTAssertEqual(loop.nextDeviceTimerMilliseconds, 1_000 + 86_400_000)
        loop.advanceClock(toMilliseconds: 1_000 + 86_400_000 - 1)
        XCTAssertEqual(fired.count, 4, "not a millisecond early")
        loop.advanceClock(toMilliseconds: 1_000 + 86_400_000)
        XCTAssertEqual(fired.last?.0, "a day")
    }

    func testRunningDueTimersLeavesThoseTheyScheduleForTheNextRun() throws {
        let loop = try EventLoop()
        loop.useManualClock(.manual(monotonicNanoseconds: 0, wallNanoseconds: 0))
        var fired: [String] = []
        loop.schedule(afterMilliseconds: 0) {
            fired.append("first")
            loop.schedule(afterMilliseconds: 0) { fired.append("second") }
        }
        XCTAssertEqual(loop.runDueDeviceTimers(), 1)
        XCTAssertEqual(fired, ["first"])
        XCTAssertEqual(loop.runDueDeviceTimers(), 1)
        XCTAssertEqual(fired, ["first", "second"])
        XCTAssertEqual(loop.runDueDeviceTimers(), 0)
    }

    func testCancellingWorksOnEitherClockAndAcrossASwitch() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        let before = loop.schedule(afterMilliseconds: 50) { fired.append("scheduled on the system clock") }
        loop.useManualClock(.manualFromSystem())
        let after = loop.schedule(afterMilliseconds: 50) { fired.append("scheduled on the manual clock") }
        let kept = loop.schedule(afterMilliseconds: 50) { fired.append("kept") }
        let real = loop.schedule(afterMilliseconds: 50, on: .realTime) { fired.append("real") }
        XCTAssertEqual(loop.pendingTimerCount, 4)
        loop.cancel(before)
        loop.cancel(after)
        loop.cancel(real)
        loop.cancel(real)
        XCTAssertEqual(loop.pendingTimerCount, 1)
        loop.advanceClock(toMilliseconds: loop.nowMilliseconds + 100)
        XCTAssertEqual(fired, ["kept"])
        XCTAssertEqual(loop.pendingTimerCount, 0)
        loop.cancel(kept)
    }

    func testSwitchingClocksKeepsWhatTimersHadLeft() throws {
        for backend in availableBackends {
            let loop = try EventLoop(backend: backend)
            var fired: [String] = []
            loop.schedule(afterMilliseconds: 60_000) { fired.append("a minute") }
            loop.schedule(afterMilliseconds: 20, on: .realTime) { fired.append("real") }
            // A manual clock far from the system's: the device timer keeps its minute.
            loop.useManualClock(.manual(monotonicNanoseconds: 7_000_000_000_000, wallNanoseconds: 0))
            let due = try XCTUnwrap(loop.nextDeviceTimerMilliseconds, "\(backend)")
            XCTAssertEqual(Double(due - 7_000_000), 60_000, accuracy: 50, "\(backend)")
            loop.schedule(afterMilliseconds: 40, on: .realTime) { loop.stop() }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(fired, ["real"], "\(backend): the real-time timer stayed on real time")

            loop.advanceClock(toMilliseconds: 7_000_000 + 59_900)
            XCTAssertEqual(fired, ["real"], "\(backend)")
            // Back on the system clock with a tenth of a second left.
            loop.useSystemClock()
            XCTAssertEqual(loop.clock, .system, "\(backend)")
            XCTAssertNil(loop.nextDeviceTimerMilliseconds, "\(backend)")
            let started = loop.realMilliseconds
            loop.schedule(afterMilliseconds: 150) { loop.stop() }
            try runLoop(loop, "\(backend)")
            XCTAssertEqual(fired, ["real", "a minute"], "\(backend)")
            XCTAssertGreaterThanOrEqual(loop.realMilliseconds - started, 90, "\(backend): it kept the time it had left")
        }
    }
}

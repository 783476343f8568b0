import Foundation
import LinkClient
import LinkControl
import LinkJSON

extension WatchLinkPair {
    /// The device clock a pair runs on: the system's, or a manual one that moves only when the
    /// test moves it (``WatchLinkPair/advanceClock(by:)``, ``WatchLinkPair/setClock(to:)``). The
    /// phone's clock is the pair's; every watch follows it.
    public struct Clock: Sendable, Equatable {
        /// Whether the clock is manual.
        public let isManual: Bool
        /// A manual clock's time at start; nil for the real time at start.
        public let start: Date?

        /// The system's clock: time passes as it does.
        public static let system = Clock(isManual: false, start: nil)
        /// A manual clock that reads the real time at start until it is moved.
        public static let manual = Clock(isManual: true, start: nil)

        /// A manual clock that reads `start` at start (from 1970 to the year 9999).
        public static func manual(startingAt start: Date) -> Clock {
            Clock(isManual: true, start: start)
        }

        /// phoned's flags for this clock.
        var phoneArguments: [String] {
            guard isManual else { return [] }
            return ["--clock", "manual"] + (start.map { ["--clock-start", ISO8601Timestamp.string(from: $0)] } ?? [])
        }
    }

    /// Starts phoned on `clock` and `watchCount` watches, as
    /// ``start(watchCount:activate:phoneArguments:watchArguments:timeout:)`` does, and returns
    /// once every watch follows the phone's clock.
    ///
    /// ```swift
    /// let pair = try WatchLinkPair.start(activate: true, clock: .manual)
    /// try pair.advanceClock(by: 24 * 3600)   // a day, at once: the timers of the day fire in order
    /// ```
    public static func start(
        watchCount: Int = 1, activate: Bool = false, clock: Clock, phoneArguments: [String] = [],
        watchArguments: [String] = [], timeout: Double = 10
    ) throws -> WatchLinkPair {
        let pair = try start(
            watchCount: watchCount, activate: activate, phoneArguments: clock.phoneArguments + phoneArguments,
            watchArguments: watchArguments, timeout: timeout)
        guard clock.isManual else { return pair }
        do {
            for watch in pair.watches { try pair.waitUntilFollowing(watch, timeout: timeout) }
        } catch {
            pair.stop(keepingLogs: true)
            throw error
        }
        return pair
    }

    /// The pair's time now: the phone's device clock (its wall clock).
    public func clockTime() throws -> Date {
        try Self.date(of: try phoneCall("status")["clock"]?.objectValue ?? [:])
    }

    /// Moves the pair's manual clock `seconds` ahead (to the millisecond, at most 366 days) and
    /// returns the new time, once the phone and every linked watch show it. The timers that fall
    /// due on the way, on every daemon of the pair, fire in the order of their deadlines, each
    /// at its own time, and what each causes is handled before the next fires.
    ///
    /// - Throws: the daemon's error: `invalidArgument` when the pair runs on the system clock.
    @discardableResult
    public func advanceClock(by seconds: TimeInterval) throws -> Date {
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds >= 0, milliseconds <= 366 * 86_400_000 else {
            throw WatchLinkTestingError("advanceClock(by:) takes 0 to 366 days, not \(seconds) s")
        }
        return try Self.date(of: try phoneCall("clock.advance", ["ms": .int(Int64(milliseconds))]))
    }

    /// Sets the pair's manual clock to `date`, as setting a device's date does: what reads a
    /// date reads the new one, timers keep the time they have left.
    @discardableResult
    public func setClock(to date: Date) throws -> Date {
        try Self.date(of: try phoneCall("clock.set", ["time": .string(ISO8601Timestamp.string(from: date))]))
    }

    private func phoneCall(_ op: String, _ args: JSONObject = [:]) throws -> JSONObject {
        let client = try phone.client(timeout: 60)
        defer { client.close() }
        return try client.call(op, args, timeoutSeconds: 60)
    }

    private static func date(of clock: JSONObject) throws -> Date {
        guard let milliseconds = clock["wallMs"]?.intValue else {
            throw WatchLinkTestingError("phoned's answer has no clock: \(clock)")
        }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Waits until `watch` follows the phone's clock on its link.
    private func waitUntilFollowing(_ watch: WatchLinkDaemon, timeout: Double) throws {
        let client = try watch.client(timeout: timeout)
        defer { client.close() }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? client.call("status"))?["clock"]?["followsPhone"]?.boolValue == true { return }
            Thread.sleep(forTimeInterval: 0.005)
        }
        throw WatchLinkTestingError("\(watch.name) (\(watch.home)) did not follow the phone's clock within \(timeout) s:\n\(watch.log)")
    }
}

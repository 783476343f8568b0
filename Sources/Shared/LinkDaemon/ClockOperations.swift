#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkJSON
import WireProtocol

/// The ops of the pair's device clock (``PairClock``): moved on the phone, followed by the
/// watches.
struct ClockOperations {
    let clock: PairClock

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "clock.advance",
                summary: "phone, manual clock: move the pair's clock ahead, firing the timers that fall due in the order of their deadlines",
                arguments: [
                    .required("ms", .integer(0...PairClock.maximumAdvanceMilliseconds), "how far, in milliseconds (at most 366 days)")
                ]
            ) { call in
                let milliseconds = try call.args.int("ms", range: 0...PairClock.maximumAdvanceMilliseconds)
                try clock.advance(by: milliseconds) { call.respond($0) }
            },
            ControlOperation(
                "clock.set",
                summary: "phone, manual clock: set the pair's wall clock (dates); timers keep their time",
                arguments: [.required("time", .string, "ISO 8601 with a zone, 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z")]
            ) { call in
                let text = try call.args.string("time")
                guard let date = ISO8601Timestamp.date(from: text) else {
                    throw call.args.invalid("'time' must be an ISO 8601 date and time with a zone (2026-12-31T23:59:00Z); got '\(text)'")
                }
                let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
                guard milliseconds >= 0, milliseconds <= Double(ClockSetting.maximumWallMilliseconds) else {
                    throw call.args.invalid("'time' must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z; got '\(text)'")
                }
                try clock.set(wallMilliseconds: Int64(milliseconds)) { call.respond($0) }
            },
        ]
    }
}

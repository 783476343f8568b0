#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ISO 8601 timestamps as the control protocol writes and reads them.
///
/// Written as `2024-05-01T12:30:45.123Z` (UTC, milliseconds). Read with or without fractional
/// seconds, with `Z` or a `±HH:MM` / `±HHMM` offset. Pure arithmetic: no formatter, no locale,
/// safe from any thread.
public enum ISO8601Timestamp {
    /// `date` in UTC with milliseconds, rounded to the nearest millisecond. The date must be
    /// one a timestamp can name (see ``string(ifRepresentable:)``): the daemons' own clocks'.
    public static func string(from date: Date) -> String {
        guard let text = string(ifRepresentable: date) else {
            preconditionFailure("\(date.timeIntervalSince1970) s since 1970 is not a date a timestamp can name")
        }
        return text
    }

    /// `date` as ``string(from:)`` writes it; nil when no timestamp names it: not finite, or
    /// so far from 1970 (about 292 million years) that its milliseconds do not fit an `Int64`.
    /// Dates read from a property list, which holds any double, can be such.
    public static func string(ifRepresentable date: Date) -> String? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite, milliseconds > -9.2e18, milliseconds < 9.2e18 else { return nil }
        return string(fromMilliseconds: Int64(milliseconds))
    }

    /// The instant `totalMilliseconds` after 1970 as ``string(from:)`` writes it.
    public static func string(fromMilliseconds totalMilliseconds: Int64) -> String {
        let (days, millisecondOfDay) = floorDivide(totalMilliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let hour = millisecondOfDay / 3_600_000
        let minute = millisecondOfDay / 60_000 % 60
        let second = millisecondOfDay / 1000 % 60
        let millisecond = millisecondOfDay % 1000
        let yearText = year < 0 ? "-" + pad(-year, 4) : pad(year, 4)
        return "\(yearText)-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
    }

    /// The date that `text` names, or `nil` when it is not an ISO 8601 date-time with a zone.
    public static func date(from text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take("-"),
            let month = scanner.digits(2), scanner.take("-"),
            let day = scanner.digits(2), scanner.take("T") || scanner.take("t"),
            let hour = scanner.digits(2), scanner.take(":"),
            let minute = scanner.digits(2), scanner.take(":"),
            let second = scanner.digits(2)
        else { return nil }
        var fraction = 0.0
        if scanner.take(".") || scanner.take(",") {
            guard let digits = scanner.fractionDigits() else { return nil }
            fraction = digits
        }
        var offsetSeconds: Int64 = 0
        if scanner.take("Z") || scanner.take("z") {
            offsetSeconds = 0
        } else if let sign = scanner.sign() {
            guard let offsetHours = scanner.digits(2) else { return nil }
            _ = scanner.take(":")
            guard let offsetMinutes = scanner.digits(2), offsetHours <= 23, offsetMinutes <= 59 else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard scanner.atEnd,
            (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, days since 1970-01-01)

    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11:
            return 30
        default:
            return 31
        }
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func digits(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        mutating func fractionDigits() -> Double? {
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            guard index > start else { return nil }
            return Double("0." + String(decoding: bytes[start..<index], as: UTF8.self))
        }

        mutating func sign() -> Int64? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }
    }
}

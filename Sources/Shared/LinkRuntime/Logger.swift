#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem

/// Writes one line an event, to standard error by default:
/// `2026-11-30T07:19:36.123Z info  phoned: link up peer=watch-1`.
///
/// Each line is a single `write(2)`, so lines from several threads do not interleave. Line
/// breaks inside a message are written as `\n`, keeping one event on one line.
public struct Logger: Sendable {
    /// Names the component, e.g. the daemon.
    public let label: String
    /// The most detailed level written.
    public var level: LogLevel
    /// Where lines go.
    public let fileDescriptor: Int32

    public init(label: String, level: LogLevel, fileDescriptor: Int32 = 2) {
        self.label = label
        self.level = level
        self.fileDescriptor = fileDescriptor
    }

    /// A logger with the same level and output and another label.
    public func withLabel(_ label: String) -> Logger {
        Logger(label: label, level: level, fileDescriptor: fileDescriptor)
    }

    /// Whether messages of `level` are written.
    @inline(__always)
    public func isEnabled(_ level: LogLevel) -> Bool {
        level <= self.level
    }

    /// Logs `message` at ``LogLevel/error``; the other methods likewise for their level.
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }

    /// Writes `message` at `level` if that level is enabled.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard isEnabled(level) else { return }
        var line = Logger.timestamp()
        line.reserveCapacity(64)
        line.append(" ")
        let tag = level.tag
        line.append(tag)
        line.append(String(repeating: " ", count: 6 - tag.count))
        line.append(label)
        line.append(": ")
        Logger.appendEscaped(message(), to: &line)
        line.append("\n")
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            try? Syscall.writeAll(fileDescriptor, UnsafeRawBufferPointer(buffer))
        }
    }

    /// The current UTC time as `2026-11-30T07:19:36.123Z`.
    public static func timestamp() -> String {
        let now = Syscall.realtime()
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let milliseconds = Int(now.tv_nsec) / 1_000_000
        var result = ""
        result.reserveCapacity(24)
        appendPadded(Int(parts.tm_year) + 1900, 4, &result)
        result.append("-")
        appendPadded(Int(parts.tm_mon) + 1, 2, &result)
        result.append("-")
        appendPadded(Int(parts.tm_mday), 2, &result)
        result.append("T")
        appendPadded(Int(parts.tm_hour), 2, &result)
        result.append(":")
        appendPadded(Int(parts.tm_min), 2, &result)
        result.append(":")
        appendPadded(Int(parts.tm_sec), 2, &result)
        result.append(".")
        appendPadded(milliseconds, 3, &result)
        result.append("Z")
        return result
    }

    private static func appendPadded(_ value: Int, _ width: Int, _ output: inout String) {
        let digits = String(value)
        if digits.count < width {
            output.append(String(repeating: "0", count: width - digits.count))
        }
        output.append(digits)
    }

    private static func appendEscaped(_ message: String, to line: inout String) {
        guard message.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else {
            line.append(message)
            return
        }
        for scalar in message.unicodeScalars {
            switch scalar {
            case "\n": line.append("\\n")
            case "\r": line.append("\\r")
            default: line.unicodeScalars.append(scalar)
            }
        }
    }
}

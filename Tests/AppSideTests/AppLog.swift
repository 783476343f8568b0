import Foundation
import LinkJSON
import WatchLinkTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The output of an app a daemon launched (app.install): one JSON object a line, in the log the
// daemon appends the program's output to.

/// The lines in `log` whose `cb` is `callback`.
func lines(_ log: String, _ callback: String) -> [JSONObject] {
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { try? JSON.parse(Array($0.utf8)).objectValue }.filter { $0["cb"]?.stringValue == callback }
}

/// Waits for `count` lines of `callback` in `log`.
@discardableResult
func waitForLines(_ log: String, _ callback: String, count: Int = 1, timeout: Double = 20) throws -> [JSONObject] {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        let found = lines(log, callback)
        if found.count >= count { return found }
        usleep(10_000)
    }
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? "(no log)"
    throw WatchLinkTestingError("\(count) '\(callback)' lines did not come within \(timeout) s; \(log):\n\(text)")
}

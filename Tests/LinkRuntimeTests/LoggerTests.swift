#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkRuntime
import LinkSystem
import XCTest

final class LoggerTests: XCTestCase {
    private func capture(_ body: (Int32) -> Void) -> String {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        body(fds[1])
        close(fds[1])
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &buffer, buffer.count)
            if n <= 0 { break }
            output.append(contentsOf: buffer[0..<n])
        }
        close(fds[0])
        return String(decoding: output, as: UTF8.self)
    }

    func testLineFormatAndLevelFiltering() {
        let output = capture { fd in
            let logger = Logger(label: "phoned", level: .info, fileDescriptor: fd)
            logger.info("link up peer=watch-1")
            logger.debug("hidden")
            logger.warning("two\nlines")
            logger.error("bad")
            logger.trace("hidden too")
        }
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 4, output)
        XCTAssertEqual(lines.last, "")
        let expectedTails = [" info  phoned: link up peer=watch-1", " warn  phoned: two\\nlines", " error phoned: bad"]
        for (line, tail) in zip(lines, expectedTails) {
            XCTAssertTrue(line.hasSuffix(tail), "\(line)")
            let stamp = Array(line.utf8.prefix(24))
            XCTAssertEqual(stamp.count, 24)
            XCTAssertEqual(String(decoding: stamp, as: UTF8.self).last, "Z")
            let separators: [Int: Character] = [4: "-", 7: "-", 10: "T", 13: ":", 16: ":", 19: "."]
            for (offset, character) in separators {
                XCTAssertEqual(Character(UnicodeScalar(stamp[offset])), character, "\(line)")
            }
        }
    }

    func testLevelNames() {
        XCTAssertEqual(LogLevel(name: "DEBUG"), .debug)
        XCTAssertEqual(LogLevel(name: "warn"), .warning)
        XCTAssertEqual(LogLevel(name: "warning"), .warning)
        XCTAssertNil(LogLevel(name: "loud"))
        XCTAssertTrue(LogLevel.error < .trace)
        XCTAssertTrue(Logger(label: "x", level: .debug).isEnabled(.info))
        XCTAssertFalse(Logger(label: "x", level: .warning).isEnabled(.info))
    }
}

import Foundation

/// One line on standard output with the wall-clock time, written at once (a test reads it).
func say(_ line: String) {
    let time = String(format: "%.3f", Date().timeIntervalSince1970)
    FileHandle.standardOutput.write(Data("example \(time) \(line)\n".utf8))
}

/// The example's command line.
enum Options {
    static let neverComplete = CommandLine.arguments.contains("--never-complete")
    static let stallOn = value("--stall-on").flatMap { Int($0) }
    static let refreshAfter = value("--refresh-after").flatMap { Double($0) }

    private static func value(_ name: String) -> String? {
        guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return nil }
        return CommandLine.arguments[index + 1]
    }
}

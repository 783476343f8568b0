import Foundation

// What the app processes of the app-side tests share: their flags, their output (one JSON
// object a line, written whole), and their commands (one JSON object a line on standard input,
// run on the main queue, which `dispatchMain()` runs, so completions on the main queue arrive).

/// The value after `name` on the command line.
public func option(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[index + 1]
}

private let output = NSLock()

/// One line of output, written at once (a test reads it while the process runs).
public func emit(_ object: [String: Any]) {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
    output.withLock { FileHandle.standardOutput.write(data + Data("\n".utf8)) }
}

/// An error as a line shows it: its domain, code and message; null for none.
public func describe(_ error: Error?) -> Any {
    guard let error = error as NSError? else { return NSNull() }
    return ["domain": error.domain, "code": error.code, "message": error.localizedDescription]
}

/// Reads commands on a thread of their own and runs each on the main queue; returns at once.
public func readCommands(_ run: @escaping @MainActor ([String: Any]) -> Void) {
    let reader = Thread {
        while let line = readLine() {
            guard let data = line.data(using: .utf8), let command = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                emit(["cb": "badCommand", "line": line])
                continue
            }
            let box = ParsedCommand(command)
            DispatchQueue.main.async { run(box.value) }
        }
    }
    reader.start()
}

/// A parsed command handed to the main queue, which alone uses it.
private struct ParsedCommand: @unchecked Sendable {
    let value: [String: Any]
    init(_ value: [String: Any]) { self.value = value }
}

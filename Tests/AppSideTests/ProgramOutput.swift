/// What the programs these tests start write, read the same way by every test.
enum ProgramOutput {
    /// The lines an example app writes (`example <time> <text>`, `Examples/*/Output.swift`),
    /// in order; other lines are left out.
    static func exampleLines(_ output: String) -> [(time: Double, text: String)] {
        output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3, parts[0] == "example", let time = Double(parts[1]) else { return nil }
            return (time, String(parts[2]))
        }
    }

    /// The sanitizer reports in a program's output: under `scripts/test.sh --sanitize` the app
    /// processes (the library's threads) are checked too.
    static func sanitizerReports(_ output: String) -> [Substring] {
        output.split(separator: "\n").filter { $0.contains("WARNING: ThreadSanitizer") || $0.contains("ERROR: AddressSanitizer") }
    }
}

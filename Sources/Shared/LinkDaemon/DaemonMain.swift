#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkSystem
import WireProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The shared `main` of `phoned` and `watchd`.
public enum DaemonMain {
    public static func run(role: Role, features: @escaping () -> [DaemonFeature] = { [] }) -> Never {
        let name = role == .phone ? "phoned" : "watchd"
        let features = features()
        switch DaemonOptions.parse(
            Array(CommandLine.arguments.dropFirst()), role: role,
            featureOptions: features.flatMap(\.commandLineOptions))
        {
        case .exit(let code, let output):
            if code == 0 { print(output) } else { writeStandardError(output + "\n") }
            exit(code)
        case .run(let options):
            do {
                let daemon = try Daemon(options: options, features: features)
                try daemon.start()
                try daemon.run()
                exit(0)
            } catch {
                writeStandardError("\(name): error: \(error)\n")
                exit(1)
            }
        }
    }

    private static func writeStandardError(_ text: String) {
        Array(text.utf8).withUnsafeBytes { _ = SystemCalls.writeAll(2, $0) }
    }
}

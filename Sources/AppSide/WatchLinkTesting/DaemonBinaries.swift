import Foundation

/// Where the package's built daemons are: `WATCHLINK_BIN_DIR` when set, else the directory of
/// the running program or of a loaded bundle that has `phoned` beside it (a test bundle in
/// `.build/debug`), else `.build/debug`.
public enum DaemonBinaries {
    /// The directory found, once per process.
    public static let directory: URL = {
        if let dir = ProcessInfo.processInfo.environment["WATCHLINK_BIN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
        var candidates = [
            URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ]
        candidates += Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        for start in candidates {
            var url = start
            while url.path != "/" && !url.path.isEmpty {
                if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("phoned").path) { return url }
                url.deleteLastPathComponent()
            }
        }
        return URL(fileURLWithPath: ".build/debug")
    }()

    /// The path of the built program `name` (`phoned`, `watchd`, `linkctl`).
    public static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

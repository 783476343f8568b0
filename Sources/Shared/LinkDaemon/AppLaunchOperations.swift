import LinkControl
import LinkJSON
import LinkSession

/// The emulated OS's ops for installed programs: install and uninstall them, launch the app
/// as a tap on its icon does, end it as the system ends a background app.
struct AppLaunchOperations {
    let context: FeatureContext
    let launcher: AppLauncher

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "app.install", summary: "how this side's OS launches its app (or, phone, its File Provider extension)",
                arguments: [
                    .required("command", .array, "the executable's absolute path, then its arguments"),
                    .optional("environment", .object, "variables added to those of an app process of this side"),
                    .optional("workingDirectory", .string, "an absolute path"),
                    .optional("extension", .string, "fileProvider (phone): install the File Provider extension instead"),
                ]
            ) { call in
                let kind = try Self.kind(call)
                let program: InstalledProgram
                do { program = try InstalledProgram(json: call.args.object) } catch {
                    throw call.args.invalid("app.install: \(error)")
                }
                try launcher.install(program, as: kind)
                call.succeed(["installed": .string(kind.name), "log": .string(AppLauncher.logPath(home: launcher.home, role: call.role, kind: kind))])
            },
            ControlOperation(
                "app.uninstall", summary: "remove the installed app (or extension); a running one is ended",
                arguments: [.optional("extension", .string, "fileProvider (phone)")]
            ) { call in
                let kind = try Self.kind(call)
                call.succeed(["uninstalled": .bool(try launcher.uninstall(kind))])
            },
            ControlOperation(
                "app.launch", summary: "launch the installed app as the user's tap does (foreground), unless it runs",
                arguments: [.optional("state", .string, "foreground (default)")]
            ) { call in
                let state = try call.args.optionalString("state") ?? "foreground"
                guard state == "foreground" else {
                    throw call.args.invalid(
                        "'state' is foreground: a user launches an app into the foreground; the OS launches it into the background for what wakes it")
                }
                // A running app (in the background, or suspended) comes to the foreground.
                if let running = launcher.launch(of: .app), running.attached {
                    context.submit(.setAppState(.foreground)) { _ in
                        call.succeed(["pid": .int(Int64(running.pid)), "reason": .string(running.reason.rawValue), "log": .string(running.logPath)])
                    }
                    return
                }
                switch launcher.launch(.app, reason: .user) {
                case .success(let launch):
                    call.succeed(["pid": .int(Int64(launch.pid)), "reason": .string(launch.reason.rawValue), "log": .string(launch.logPath)])
                case .failure(let failure):
                    throw ControlError.control(.invalidArgument, "app.launch: \(failure)")
                }
            },
            ControlOperation(
                "app.terminate", summary: "end the running app as the system ends a background app (SIGTERM, then SIGKILL)",
                arguments: [.optional("extension", .string, "fileProvider (phone)")]
            ) { call in
                let kind = try Self.kind(call)
                guard let launch = launcher.launch(of: kind) else {
                    throw call.args.invalid("app.terminate: the \(kind.name) is not running (the OS ends only what it launched)")
                }
                // Answered once it has ended: what the script does next meets an app that is not running.
                launcher.terminate(kind, reason: "terminated") { call.succeed(["pid": .int(Int64(launch.pid))]) }
            },
        ]
    }

    /// The program an op is about: the app, or the extension it names.
    private static func kind(_ call: OperationCall) throws -> InstalledProgramKind {
        guard let name = try call.args.optionalString("extension") else { return .app }
        guard let kind = InstalledProgramKind(rawValue: name), kind != .app else {
            throw call.args.invalid("'extension' names an app extension: fileProvider; got '\(name)'")
        }
        guard call.role == .phone else { throw call.args.invalid("the watch has no \(name) extension: File Provider runs on the phone") }
        return kind
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import LinkSystem
import WireProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The emulated OS's part that runs this side's installed programs (docs/app-side.md, "The
/// emulated OS launches the app"): it keeps what is installed, launches a program when the
/// device would, tracks it by pid, reaps it, and ends it when the OS would end it (a spent
/// background budget, `app.terminate`, a rule of the push feature, the daemon stopping).
///
/// Its output goes to `HOME/SIDE-KIND.log`; `app.launched` and `app.exited` events and the
/// trace tell of each launch and exit. A program that ends before it attached is a crash at
/// launch: it is logged with its status and log, and it is not launched again before a backoff
/// of 1 s, doubling up to 60 s, that an attach resets.
public final class AppLauncher {
    /// One running program.
    public struct Launch: Sendable {
        public let kind: InstalledProgramKind
        public let pid: Int32
        public let reason: LaunchReason
        public let logPath: String
        /// It attached (`app.attach`, `fileProvider.attach`): it is up, not crashing at start.
        public fileprivate(set) var attached = false
        /// Why the OS is ending it, once it is.
        var ending: String?
        /// Stopped (SIGSTOP) as watchOS suspends an app whose background tasks are done.
        public fileprivate(set) var suspended = false
        var killTimer: EventLoop.TimerID?
        var budgetTimer: EventLoop.TimerID?
    }

    /// The background time a launched app has before the OS ends it, unless it came to the
    /// foreground: 30 s, Apple's figure for an app woken in the background to handle a
    /// notification (`application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`:
    /// "up to 30 seconds of wall-clock time"). `--app-background-ms` sets it.
    public static let standardBackgroundBudgetMilliseconds: Int64 = 30_000
    /// How long an ended program has between SIGTERM and SIGKILL.
    static let terminationGraceMilliseconds: Int64 = 2_000
    static let firstBackoffMilliseconds: Int64 = 1_000
    static let maximumBackoffMilliseconds: Int64 = 60_000

    let loop: EventLoop
    let logger: Logger
    let tracer: Tracer
    private let role: Role
    let home: String
    private let controlPath: String
    private let store: InstalledPrograms
    private let backgroundBudgetMilliseconds: Int64
    /// Given by `--app-command`: installed at every start, not kept in the state file.
    private let commandLineApp: InstalledProgram?
    var publish: (String, JSONObject) -> Void = { _, _ in }
    /// Tells the app's session that the app is installed or not, or that its launch failed.
    var tellSession: (SessionCommand) -> Void = { _ in }
    /// Reports `apps.json` not written (``StoreFailureRecovery/stateWriteFailed(_:_:)``).
    var stateWriteFailed: (String, Error) -> Void = { _, _ in }
    private var installed: [InstalledProgramKind: InstalledProgram] = [:]
    var running: [InstalledProgramKind: Launch] = [:]
    /// Crash-at-launch backoff per program: consecutive failures and the earliest next launch.
    var backoff: [InstalledProgramKind: (failures: Int, notBefore: Int64, lastExit: String)] = [:]
    private var installObservers: [(InstalledProgramKind) -> Void] = []
    /// What waits for a program to end (`app.terminate`), by pid.
    var endWaiters: [Int32: [() -> Void]] = [:]

    init(options: DaemonOptions, loop: EventLoop, logger: Logger, tracer: Tracer) {
        self.loop = loop
        self.logger = logger
        self.tracer = tracer
        role = options.role
        home = options.home
        controlPath = options.controlPath
        store = InstalledPrograms(path: options.stateDirectory + "/apps.json")
        backgroundBudgetMilliseconds = options.appBackgroundMilliseconds
        commandLineApp = options.appCommand
    }

    /// Loads what is installed, tells the session, and starts reaping children.
    func start() throws {
        installed = try store.load()
        if let commandLineApp { installed[.app] = commandLineApp }
        try loop.onSignals([SIGCHLD]) { [unowned self] _ in self.reapExited() }
        if installed[.app] != nil { tellSession(.setAppInstalled(true)) }
        for (kind, program) in installed.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            logger.info("app: \(kind.name) installed: \(program.command.joined(separator: " "))")
        }
    }

    // MARK: Installing

    public func isInstalled(_ kind: InstalledProgramKind) -> Bool { installed[kind] != nil }
    public func launch(of kind: InstalledProgramKind) -> Launch? { running[kind] }

    /// Calls `observer` whenever a program of a kind is installed (again) or uninstalled.
    public func observeInstalls(_ observer: @escaping (InstalledProgramKind) -> Void) {
        installObservers.append(observer)
    }

    func install(_ program: InstalledProgram, as kind: InstalledProgramKind) throws {
        var programs = installed
        programs[kind] = program
        try save(programs)
        installed = programs
        backoff[kind] = nil
        logger.info("app: \(kind.name) installed: \(program.command.joined(separator: " "))")
        if kind == .app { tellSession(.setAppInstalled(true)) }
        for observer in installObservers { observer(kind) }
    }

    func uninstall(_ kind: InstalledProgramKind) throws -> Bool {
        guard installed[kind] != nil else { return false }
        var programs = installed
        programs[kind] = nil
        try save(programs)
        installed = programs
        terminate(kind, reason: "uninstalled")
        logger.info("app: \(kind.name) uninstalled")
        if kind == .app { tellSession(.setAppInstalled(false)) }
        for observer in installObservers { observer(kind) }
        return true
    }

    private func save(_ programs: [InstalledProgramKind: InstalledProgram]) throws {
        var kept = programs
        if let commandLineApp, kept[.app] == commandLineApp { kept[.app] = nil }
        do { try store.save(kept) } catch {
            stateWriteFailed(store.path, error)
            throw ControlError.control(.internalError, "cannot write \(store.path): \(error)")
        }
    }

    // MARK: Launching

    /// Launches `kind` for `reason` unless it runs already; the launch, or why there is none.
    @discardableResult
    public func launch(_ kind: InstalledProgramKind, reason: LaunchReason) -> Result<Launch, LaunchFailure> {
        if let launch = running[kind] {
            if launch.ending == nil { return .success(launch) }
            return .failure(LaunchFailure("the \(kind.name) (pid \(launch.pid)) is being ended (\(launch.ending!))"))
        }
        guard let program = installed[kind] else { return .failure(LaunchFailure("no \(kind.name) is installed (app.install)")) }
        if let wait = backoff[kind], wait.notBefore > loop.nowMilliseconds {
            return .failure(
                LaunchFailure("the \(kind.name) \(wait.lastExit) at its last launch; it is not launched again for \(wait.notBefore - loop.nowMilliseconds) ms"))
        }
        let logPath = Self.logPath(home: home, role: role, kind: kind)
        let pid: Int32
        do {
            pid = try ChildProcesses.spawn(
                executable: program.executable, arguments: Array(program.command.dropFirst()),
                environment: environment(for: program, reason: reason), workingDirectory: program.workingDirectory,
                outputPath: logPath)
        } catch {
            let failure = LaunchFailure("cannot launch the \(kind.name) \(program.executable): \(error)")
            logger.error("app: \(failure.description)")
            return .failure(failure)
        }
        var launch = Launch(kind: kind, pid: pid, reason: reason, logPath: logPath)
        // The watch's background runs have the budget of their tasks (the session's rules).
        if reason != .user, kind == .app, role == .phone {
            launch.budgetTimer = loop.schedule(afterMilliseconds: backgroundBudgetMilliseconds) { [unowned self] in
                self.backgroundBudgetSpent(pid)
            }
        }
        running[kind] = launch
        logger.info("app: launched the \(kind.name) for \(reason.rawValue): pid \(pid), output in \(logPath)")
        let fields: JSONObject = [
            "program": .string(kind.name), "reason": .string(reason.rawValue), "pid": .int(Int64(pid)),
            "log": .string(logPath), "state": .string(reason == .user ? "foreground" : "background"),
        ]
        var entry = fields
        entry["name"] = "launched"
        tracer.record(.app, entry)
        publish("app.launched", fields)
        return .success(launch)
    }

    /// The environment of an app process of this side (`WatchLinkPair.environment(for:)`: the
    /// daemon's own, with the variables that name this daemon), then the program's own.
    private func environment(for program: InstalledProgram, reason: LaunchReason) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["WATCHLINK_HOME"] = home
        environment["WATCHLINK_SIDE"] = role.name
        environment["WATCHLINK_CONTROL"] = controlPath
        environment["WATCHLINK_LAUNCH_REASON"] = reason.rawValue
        environment.merge(program.environment) { _, given in given }
        return environment
    }

    static func logPath(home: String, role: Role, kind: InstalledProgramKind) -> String {
        "\(home)/\(role.name)-\(kind.name).log"
    }

    /// The launched program attached: it is up. Its launch state (background unless the user
    /// launched it), or nil when it was not launched by this OS.
    @discardableResult
    public func attached(_ kind: InstalledProgramKind) -> AppState? {
        guard var launch = running[kind] else { return nil }
        launch.attached = true
        running[kind] = launch
        backoff[kind] = nil
        return launch.reason == .user ? .foreground : .background
    }

    /// The app's state changed: in the foreground it has no background budget any more.
    func appStateChanged(_ state: AppState) {
        guard state == .foreground, var launch = running[.app], let timer = launch.budgetTimer else { return }
        loop.cancel(timer)
        launch.budgetTimer = nil
        running[.app] = launch
    }

    // MARK: Suspending

    /// Stops the running program as watchOS suspends an app: it runs no code until resumed.
    func suspend(_ kind: InstalledProgramKind) {
        guard var launch = running[kind], launch.ending == nil, !launch.suspended else { return }
        launch.suspended = true
        running[kind] = launch
        SystemCalls.signal(launch.pid, SIGSTOP)
        logger.info("app: suspended the \(kind.name) (pid \(launch.pid)): its background tasks are completed")
    }

    /// Lets a suspended program run again.
    func resume(_ kind: InstalledProgramKind) {
        guard var launch = running[kind], launch.suspended else { return }
        launch.suspended = false
        running[kind] = launch
        SystemCalls.signal(launch.pid, SIGCONT)
        logger.info("app: resumed the \(kind.name) (pid \(launch.pid))")
    }

    private func backgroundBudgetSpent(_ pid: Int32) {
        guard var launch = running[.app], launch.pid == pid else { return }
        launch.budgetTimer = nil
        running[.app] = launch
        logger.info("app: the app (pid \(pid)) spent its background time (\(backgroundBudgetMilliseconds) ms): ending it")
        terminate(.app, reason: "backgroundBudget")
    }

    // MARK: Status

    /// `status.apps`: what is installed and what runs.
    var status: JSONObject {
        var result: JSONObject = [:]
        for kind in InstalledProgramKind.allCases {
            guard let program = installed[kind] else { continue }
            var entry: JSONObject = [
                "command": .array(program.command.map(JSONValue.string)),
                "log": .string(Self.logPath(home: home, role: role, kind: kind)),
                "running": .bool(running[kind] != nil),
            ]
            if let launch = running[kind] {
                entry["pid"] = .int(Int64(launch.pid))
                entry["reason"] = .string(launch.reason.rawValue)
                if launch.suspended { entry["suspended"] = true }
            }
            result[kind.name] = .object(entry)
        }
        return result
    }
}

/// Why a program was not launched, in words.
public struct LaunchFailure: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

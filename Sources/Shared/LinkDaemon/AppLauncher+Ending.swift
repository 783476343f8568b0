import LinkJSON
import LinkRuntime
import LinkSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ending programs as the OS ends them (SIGTERM, then SIGKILL after the grace period),
/// reaping those that exited and reporting each exit (`app.exited`, the trace), the
/// crash-at-launch backoff of a program that ended before it attached, and ending every
/// program when the daemon stops.
extension AppLauncher {
    // MARK: Ending

    /// Ends `kind` as the OS ends an app: SIGTERM, SIGKILL after the grace period.
    /// `whenEnded` runs once it has exited and was reaped.
    public func terminate(_ kind: InstalledProgramKind, reason: String, whenEnded: (() -> Void)? = nil) {
        if let whenEnded, let pid = running[kind]?.pid { endWaiters[pid, default: []].append(whenEnded) }
        guard var launch = running[kind], launch.ending == nil else { return }
        launch.ending = reason
        if let timer = launch.budgetTimer { loop.cancel(timer) }
        launch.budgetTimer = nil
        let pid = launch.pid
        SystemCalls.signal(pid, SIGTERM)
        // A stopped (suspended) process handles its SIGTERM only once it runs.
        if launch.suspended { SystemCalls.signal(pid, SIGCONT) }
        // Real time: a process that ignores SIGTERM is killed while a manual clock stands still.
        launch.killTimer = loop.schedule(afterMilliseconds: Self.terminationGraceMilliseconds, on: .realTime) { [unowned self] in
            guard self.running[kind]?.pid == pid else { return }
            self.logger.warning("app: the \(kind.name) (pid \(pid)) did not end within \(Self.terminationGraceMilliseconds) ms of SIGTERM: SIGKILL")
            SystemCalls.signal(pid, SIGKILL)
        }
        running[kind] = launch
        logger.info("app: ending the \(kind.name) (pid \(pid)): \(reason)")
    }

    /// Ends `kind` at once (SIGKILL), as watchOS's watchdog ends an app: `detail` says why in the log.
    func kill(_ kind: InstalledProgramKind, reason: String, detail: String) {
        guard var launch = running[kind] else {
            logger.warning("app: the \(kind.name) would be ended (\(reason): \(detail)), but it is not a program this OS launched")
            return
        }
        launch.ending = reason
        if let timer = launch.budgetTimer { loop.cancel(timer) }
        launch.budgetTimer = nil
        running[kind] = launch
        logger.error("app: the watchdog ends the \(kind.name) (pid \(launch.pid)): \(detail)")
        SystemCalls.signal(launch.pid, SIGKILL)
    }

    /// SIGCHLD: every program that ended is reaped and reported.
    func reapExited() {
        for (kind, launch) in running {
            guard let exit = ChildProcesses.reap(launch.pid) else { continue }
            ended(launch, exit)
            running[kind] = nil
        }
    }

    private func ended(_ launch: Launch, _ exit: ChildExit) {
        if let timer = launch.killTimer { loop.cancel(timer) }
        if let timer = launch.budgetTimer { loop.cancel(timer) }
        var fields: JSONObject = [
            "program": .string(launch.kind.name), "pid": .int(Int64(launch.pid)),
            "reason": .string(launch.ending ?? (launch.attached ? "exited" : "crashedAtLaunch")),
            "log": .string(launch.logPath),
        ]
        switch exit {
        case .exited(let status): fields["status"] = .int(Int64(status))
        case .signaled(let signo): fields["signal"] = .int(Int64(signo))
        }
        if !launch.attached, launch.ending == nil {
            let failures = (backoff[launch.kind]?.failures ?? 0) + 1
            let wait = Self.crashBackoffMilliseconds(afterFailures: failures)
            backoff[launch.kind] = (failures, loop.nowMilliseconds + wait, "\(exit)")
            let message = "the \(launch.kind.name) (pid \(launch.pid)) \(exit) before it attached; its output is in \(launch.logPath)"
            logger.error("app: \(message); not launched again for \(wait) ms")
            if launch.kind == .app { tellSession(.appLaunchFailed(message)) }
        } else {
            logger.info("app: the \(launch.kind.name) (pid \(launch.pid)) \(exit)")
        }
        var entry = fields
        entry["name"] = "exited"
        tracer.record(.app, entry)
        publish("app.exited", fields)
        for waiter in endWaiters.removeValue(forKey: launch.pid) ?? [] { waiter() }
    }

    /// How long a program that crashed at launch `failures` times in a row (since it last
    /// attached) is not launched again: 1 s, doubling with each crash, at most 60 s.
    static func crashBackoffMilliseconds(afterFailures failures: Int) -> Int64 {
        min(firstBackoffMilliseconds << min(failures - 1, 16), maximumBackoffMilliseconds)
    }

    /// The daemon stops: every program gets SIGTERM, and SIGKILL if it has not ended within the
    /// grace period; each is reaped before this returns.
    func stop() {
        for launch in running.values {
            SystemCalls.signal(launch.pid, SIGTERM)
            if launch.suspended { SystemCalls.signal(launch.pid, SIGCONT) }
        }
        let deadline = loop.realMilliseconds + Self.terminationGraceMilliseconds
        while !running.isEmpty {
            for (kind, launch) in running {
                if let exit = ChildProcesses.reap(launch.pid) {
                    var stopped = launch
                    stopped.ending = stopped.ending ?? "daemonStopped"
                    ended(stopped, exit)
                    running[kind] = nil
                } else if loop.realMilliseconds >= deadline {
                    SystemCalls.signal(launch.pid, SIGKILL)
                }
            }
            if !running.isEmpty { usleep(2_000) }
        }
    }
}

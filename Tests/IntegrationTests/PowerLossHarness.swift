import Foundation
import LinkClient
import LinkControl
import LinkJSON
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `Tests/PowerLoss/powerloss_fs.py` mounted for a test: a FUSE file system that forgets what
/// was not synced when told to (a power cut) and fails the I/O calls it is told to.
final class PowerLossFileSystem: ControlEndpoint, @unchecked Sendable {
    let mountpoint: String
    let controlPath: String
    private let children = ChildProcesses()
    private let server: ChildProcess

    /// The Python with mfusepy: `WATCHLINK_PYTHON` (scripts/test.sh sets it), else the
    /// checkout's `.venv`. The test is skipped (and CI fails it) when neither has the binding
    /// or there is no `/dev/fuse`.
    static func python() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = ProcessInfo.processInfo.environment["WATCHLINK_PYTHON"] ?? root.path + "/.venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw XCTSkip("no \(python) (scripts/test.sh makes the environment with mfusepy)")
        }
        guard FileManager.default.fileExists(atPath: "/dev/fuse") else { throw XCTSkip("no /dev/fuse") }
        return python
    }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/PowerLoss/powerloss_fs.py"
    }

    /// Mounts a new, empty file system at `mountpoint` (created if missing) and waits until it is mounted.
    init(mountpoint: String, controlPath: String) throws {
        self.mountpoint = mountpoint
        self.controlPath = controlPath
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        server = children.make(try Self.python(), [Self.script, mountpoint, controlPath])
        try server.start()
        let deadline = Date().addingTimeInterval(20)
        // The control socket is bound before the mount starts.
        while !isMounted {
            guard server.isRunning else {
                throw HarnessError("powerloss_fs.py exited before mounting \(mountpoint): \(server.standardError)")
            }
            guard Date() < deadline else {
                unmount()
                throw HarnessError("powerloss_fs.py did not mount \(mountpoint) within 20 s: \(server.standardError)")
            }
            usleep(10_000)
        }
    }

    var isMounted: Bool {
        (readTextFile("/proc/self/mountinfo") ?? "").split(separator: "\n").contains { line in
            line.split(separator: " ").dropFirst(4).first.map(String.init) == mountpoint
        }
    }

    func client(timeout: Double) throws -> ControlClient {
        try ControlClient(socketPath: controlPath, timeoutSeconds: timeout)
    }

    private func call(_ op: String, _ args: JSONObject = [:]) throws -> JSONObject {
        let client = try client(timeout: 10)
        defer { client.close() }
        return try client.call(op, args)
    }

    /// The power cut: what was not synced is gone. The daemon on it must be dead already.
    @discardableResult
    func cut() throws -> Int64 {
        try call("cut")["cuts"]?.intValue ?? 0
    }

    /// The `nth` call of `op` (write, fsync, rename, open) on a file named `name` ("*": any)
    /// from now fails once with `errno` (EIO or ENOSPC).
    func fail(_ op: String, nth: Int, errno: String, name: String = "*") throws {
        _ = try call("fail", ["op": .string(op), "nth": .int(Int64(nth)), "errno": .string(errno), "name": .string(name)])
    }

    func clearFaults() throws { _ = try call("clear") }
    func resetCounts() throws { _ = try call("resetCounts") }

    /// The calls of `op` since the last `resetCounts`, over every file.
    func count(_ op: String) throws -> Int {
        let counts = try call("counts")["counts"]?[op]?.objectValue ?? [:]
        return counts.values.reduce(0) { $0 + Int($1.intValue ?? 0) }
    }

    /// The faults injected so far, oldest first.
    func faults() throws -> [JSONValue] {
        try call("faults")["faults"]?.arrayValue ?? []
    }

    /// Unmounts (the processes using it must have ended) and ends the server.
    func unmount() {
        if isMounted {
            _ = try? children.run("/usr/bin/fusermount3", ["-u", mountpoint], timeout: 20)
        }
        if server.isRunning, (try? server.finish(timeout: 10)) == nil { server.kill() }
        children.killAll()
    }
}

/// Syncs the directory `path`: its entries are durable from then on.
func syncDirectory(_ path: String) throws {
    let fd = open(path, O_RDONLY | O_DIRECTORY)
    guard fd >= 0 else { throw HarnessError("open directory \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw HarnessError("fsync directory \(path): \(String(cString: strerror(errno)))") }
}

/// A test case whose daemons keep their state on power-loss file systems: `home/phone` and
/// `home/watch` (their default state directories) are each a mount of their own, so that either
/// side can lose power alone. Unmounted at the end, after the daemons stopped.
class PowerLossTestCase: DurableTestCase {
    private(set) var disks: [String: PowerLossFileSystem] = [:]

    /// Mounts an empty power-loss file system as the state directory of `daemon`.
    func mountDisk(for daemon: RestartableDaemon) throws -> PowerLossFileSystem {
        let disk = try PowerLossFileSystem(mountpoint: daemon.stateDirectory, controlPath: home + "/\(daemon.name).fs")
        disks[daemon.name] = disk
        return disk
    }

    /// The power cut of `daemon`'s device: the process dies (SIGKILL, reaped) and its disk
    /// forgets what was not synced, at the same moment for the daemon.
    func cutPower(_ daemon: RestartableDaemon) throws {
        daemon.kill9()
        guard let disk = disks[daemon.name] else { throw HarnessError("\(daemon.name) has no power-loss disk") }
        try disk.cut()
    }

    override func daemonsStopped() {
        for disk in disks.values { disk.unmount() }
        disks.removeAll()
    }
}

/// A control client for a stream of calls that reconnects to a daemon that went away (a power
/// cut, a daemon that stopped on a fault).
final class ReconnectingClient {
    let daemon: RestartableDaemon
    private var client: ControlClient?

    init(_ daemon: RestartableDaemon) { self.daemon = daemon }

    /// The call's result, or the daemon's error, or the connection's failure.
    func call(_ op: String, _ args: JSONObject) -> Result<JSONObject, Error> {
        do {
            if client == nil { client = try connect() }
            return .success(try client!.call(op, args, timeoutSeconds: 15))
        } catch let error as ControlError {
            return .failure(error)
        } catch {
            client?.close()
            client = nil
            return .failure(HarnessError("connection to \(daemon.name) lost: \(error)"))
        }
    }

    /// The result of a call the daemon acknowledged, nil otherwise.
    func acknowledged(_ op: String, _ args: JSONObject) -> JSONObject? {
        try? call(op, args).get()
    }

    /// Connects, waiting up to 30 s for a daemon that is starting again.
    private func connect() throws -> ControlClient {
        let deadline = Date().addingTimeInterval(30)
        while true {
            do { return try daemon.client(timeout: 15) } catch {
                if Date() > deadline { throw error }
                usleep(5_000)
            }
        }
    }

    func close() { client?.close() }
}

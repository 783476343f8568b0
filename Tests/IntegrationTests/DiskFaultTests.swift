import Foundation
import LinkClient
import LinkControl
import LinkJSON
import TestSupport
import XCTest

/// I/O errors, SQLite's way: a short scenario (userInfo both ways, a context, a file and a
/// PowerAuth token) is run once to count its `write`, `fsync` and `rename` calls on each
/// side's disk, then once for every N of those counts with the Nth call failing, with EIO and
/// with ENOSPC. After each run the daemon answers, every refusal names the fault, and at the
/// end nothing that was acknowledged is missing or doubled. `WATCHLINK_DISK_FAULTS_ONLY=phoned`
/// (or `watchd`, `phoned fsync`, ...) runs only the faults of that side and op.
final class DiskFaultTests: PowerLossTestCase {
    private let instance: JSONObject = ["instanceId": "main"]

    /// What one run of the scenario was told.
    private struct Acknowledged {
        var userInfos: [String: [(n: Int, transferId: String)]] = ["p2w": [], "w2p": []]
        /// Transfers that ended with an error the sender was told (`userInfo.didFinish` /
        /// `file.didFinish`), by transferId: the error's code.
        var endedWithError: [String: Int] = [:]
        var contexts: [Int] = []
        var files: [(id: String, digest: [UInt8], run: String)] = []
        var tokensOnWatch: [String: Bool] = [:]
        var refusals: [String] = []
        /// The `store.failed` events: a turn whose write failed was rolled back.
        var storeFailures: [JSONObject] = []
    }

    func testEveryFailedWriteSyncOrRenameKeepsWhatWasAcknowledged() throws {
        let phone = restartable("phoned", logLevel: "info")
        let watch = restartable("watchd", logLevel: "info")
        let disks = [try mountDisk(for: phone), try mountDisk(for: watch)]
        try phone.startAndWait()
        try watch.startAndWait()
        for daemon in [phone, watch] { _ = try client(daemon).call("pa.instance.add", instance) }
        let p = try client(phone, timeout: 30)
        let w = try client(watch, timeout: 30)
        eventually("both sides reachable", timeout: 15) { try p.status("isReachable") == true }
        _ = try p.call("pa.activation.create", ["instanceId": "main", "commit": true])
        _ = try p.call("pa.status.sendToWatch", ["instanceId": "main", "mode": "completion"])
        let sources = makeDirectory()
        var subscribers = [try subscribed(phone), try subscribed(watch)]
        var acknowledged = Acknowledged()
        var run = 0

        /// One run of the scenario; an op that fails is a refusal, and its message must name the fault.
        var label = "counting"
        /// What the senders were told of transfers that ended, and the store failures.
        func collectEvents() {
            for events in subscribers {
                while let event = try? events.nextEvent(timeoutSeconds: 0.001) {
                    if event.name == "store.failed" {
                        acknowledged.storeFailures.append(event.data)
                    } else if ["userInfo.didFinish", "file.didFinish"].contains(event.name), let id = event.data["transferId"]?.stringValue,
                        let code = event.data["error"]?["code"]?.intValue
                    {
                        acknowledged.endedWithError[id] = Int(code)
                    }
                }
            }
        }

        func scenario() throws {
            run += 1
            let clients = [phone.name: ReconnectingClient(phone), watch.name: ReconnectingClient(watch)]
            defer { clients.values.forEach { $0.close() } }
            func call(_ daemon: RestartableDaemon, _ op: String, _ args: JSONObject) -> JSONObject? {
                switch clients[daemon.name]!.call(op, args) {
                case .success(let result): return result
                case .failure(let error):
                    acknowledged.refusals.append("\(daemon.name) \(op): \(error)")
                    return nil
                }
            }
            for (direction, daemon) in [("p2w", phone), ("w2p", watch)] {
                if let id = call(daemon, "userInfo.transfer", ["userInfo": ["dir": .string(direction), "n": .int(Int64(run))]])?["transferId"]?.stringValue {
                    acknowledged.userInfos[direction]!.append((run, id))
                }
            }
            if call(phone, "context.update", ["context": ["n": .int(Int64(run))]]) != nil { acknowledged.contexts.append(run) }
            let path = "\(sources)/file-\(run).bin"
            let digest = try writeRandomFile(path, size: 8 << 10)
            if let id = call(phone, "file.transfer", ["path": .string(path)])?["transferId"]?.stringValue {
                acknowledged.files.append((id, digest, label))
            }
            var token = instance
            token["name"] = .string("t\(run)")
            if call(phone, "pa.token.create", token) != nil {
                token["mode"] = "completion"
                acknowledged.tokensOnWatch["t\(run)"] = call(phone, "pa.token.sendToWatch", token)?["delivered"] == true ? true : nil
            }
            collectEvents()
            // Settled: the queues empty (or what a fault held back is on its way again).
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                let settled =
                    (try? p.status("outstandingUserInfoTransfers") == 0 && w.status("outstandingUserInfoTransfers") == 0
                        && p.call("file.outstanding")["transfers"] == []) ?? false
                if settled { break }
                usleep(20_000)
            }
        }

        // The calls of one run: the fewest of two (the first run creates what later runs find,
        // and SQLite checkpoints now and then).
        try scenario()
        var counts: [String: Int] = [:]
        for _ in 0..<2 {
            for disk in disks { try disk.resetCounts() }
            try scenario()
            for (disk, daemon) in zip(disks, [phone, watch]) {
                for op in ["write", "fsync", "rename"] {
                    let count = try disk.count(op)
                    counts["\(daemon.name) \(op)"] = min(counts["\(daemon.name) \(op)"] ?? count, count)
                }
            }
        }
        var plan: [(disk: PowerLossFileSystem, daemon: RestartableDaemon, op: String, count: Int)] = []
        for (disk, daemon) in zip(disks, [phone, watch]) {
            for op in ["write", "fsync", "rename"] { plan.append((disk, daemon, op, counts["\(daemon.name) \(op)"]!)) }
        }
        print("disk faults: calls of one run: " + plan.map { "\($0.daemon.name) \($0.op) \($0.count)" }.joined(separator: ", "))
        XCTAssertTrue(plan.allSatisfy { $0.op == "rename" || $0.count > 0 }, "the scenario writes and syncs on both sides")

        var injected = 0, restarts: [String] = [], missed: [String] = []
        let only = ProcessInfo.processInfo.environment["WATCHLINK_DISK_FAULTS_ONLY"]
        for step in plan where only.map({ "\(step.daemon.name) \(step.op)".hasPrefix($0) }) ?? true {
            for errno in ["EIO", "ENOSPC"] {
                for n in stride(from: 1, through: step.count, by: 1) {
                    label = "\(step.daemon.name) \(step.op) #\(n) \(errno)"
                    let faultsBefore = try step.disk.faults().count
                    try step.disk.fail(step.op, nth: n, errno: errno)
                    let refusalsBefore = acknowledged.refusals.count
                    try scenario()
                    try step.disk.clearFaults()
                    if try step.disk.faults().count > faultsBefore {
                        injected += 1
                    } else {
                        missed.append("\(step.daemon.name) \(step.op) #\(n) \(errno)")
                    }
                    for refusal in acknowledged.refusals[refusalsBefore...] {
                        XCTAssertTrue(
                            Self.namesAFault(refusal), "a refusal that does not name the fault (\(step.daemon.name) \(step.op) #\(n) \(errno)): \(refusal)")
                    }
                    for daemon in [phone, watch] where !daemon.isRunning {
                        restarts.append("\(daemon.name) after \(step.op) #\(n) \(errno)")
                        try daemon.startAndWait()
                        _ = try client(daemon).call("pa.instance.add", instance)
                        subscribers = [try subscribed(phone), try subscribed(watch)]
                    }
                }
            }
        }

        // A run with fewer calls than counted (after a fault, or without a checkpoint) leaves its fault unreached.
        XCTAssertGreaterThanOrEqual(injected * 10, (injected + missed.count) * 9, "most armed faults were reached: missed \(missed)")
        let p2 = try client(phone, timeout: 30)
        let w2 = try client(watch, timeout: 30)
        eventually("the queues to drain", timeout: 60) {
            try p2.status("outstandingUserInfoTransfers") == 0 && w2.status("outstandingUserInfoTransfers") == 0
                && p2.call("file.outstanding")["transfers"] == []
        }
        collectEvents()  // the transfers that ended after the last run
        XCTAssertFalse(acknowledged.storeFailures.isEmpty, "the faults that rolled a turn back are events")
        for failure in acknowledged.storeFailures {
            XCTAssertTrue(Self.namesAFault(failure["message"]?.stringValue ?? ""), "a store.failed event that does not name the fault: \(failure)")
            XCTAssertTrue(["diskFull", "writeFailed"].contains(failure["reason"]?.stringValue), "\(failure)")
        }
        for (direction, receiver) in [("p2w", w2), ("w2p", p2)] {
            let numbers = try Received.userInfos(receiver).compactMap {
                $0["dir"] == .string(direction) ? $0["n"]?.intValue.map(Int.init) : nil
            }
            // A transfer the receiver had no room for ends with 7015 at the sender, as WatchConnectivity's does.
            let ended = acknowledged.userInfos[direction]!.filter { acknowledged.endedWithError[$0.transferId] != nil }
            XCTAssertEqual(
                Set(ended.map { acknowledged.endedWithError[$0.transferId] }), ended.isEmpty ? [] : [7015],
                "\(direction): the error a transfer ended with")
            let missing = Set(acknowledged.userInfos[direction]!.filter { acknowledged.endedWithError[$0.transferId] == nil }.map(\.n))
                .subtracting(numbers)
            XCTAssertEqual(missing.sorted(), [], "\(direction): acknowledged userInfo never received, nor ended with an error")
            XCTAssertTrue(Set(ended.map(\.n)).isDisjoint(with: numbers), "\(direction): a transfer ended with an error and was received")
            XCTAssertEqual(numbers.count, Set(numbers).count, "\(direction): a userInfo received twice")
            XCTAssertEqual(numbers, numbers.sorted(), "\(direction): userInfo out of order")
        }
        let newest = try XCTUnwrap(p2.call("context.get")["applicationContext"]?["n"]?.intValue)
        XCTAssertGreaterThanOrEqual(newest, Int64(acknowledged.contexts.last ?? 0), "the newest acknowledged context is kept")
        eventually("the watch to get the newest context", timeout: 30) {
            try w2.call("context.get")["receivedApplicationContext"]?["n"]?.intValue == newest
        }
        var received: [String: [String]] = [:]
        for item in try Received.items(w2, kind: "file") {
            if let id = item["transferId"]?.stringValue, let path = item["path"]?.stringValue { received[id, default: []].append(path) }
        }
        for (id, digest, run) in acknowledged.files {
            if let code = acknowledged.endedWithError[id] {
                XCTAssertEqual(code, 7015, "file \(id) (the run with \(run)) ended with \(code)")
                XCTAssertNil(received[id], "file \(id) ended with an error and was received")
                continue
            }
            guard let paths = received[id] else {
                XCTFail("file \(id) (the run with \(run)): acknowledged, never received")
                continue
            }
            XCTAssertEqual(paths.count, 1, "file \(id) received \(paths.count) times")
            XCTAssertEqual(try sha256(of: paths[0]), digest, "file \(id) is not the one sent")
        }
        let onWatch = Set(try w2.call("pa.token.local", instance)["tokens"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        for (name, _) in acknowledged.tokensOnWatch where !onWatch.contains(name) {
            XCTFail("token \(name): the watch said it took it; it is gone")
        }
        print(
            "disk faults: \(run) runs, \(injected) faults injected, \(missed.count) armed and not reached: \(missed.prefix(12)), \(acknowledged.refusals.count) refusals, "
                + "restarts \(restarts.count): \(restarts.prefix(10)); acknowledged userInfo \(acknowledged.userInfos.mapValues(\.count)), "
                + "contexts \(acknowledged.contexts.count), files \(acknowledged.files.count), tokens \(acknowledged.tokensOnWatch.count), "
                + "ended with an error \(acknowledged.endedWithError.count), store.failed events \(acknowledged.storeFailures.count)")
    }

    /// Whether a refusal names an I/O fault (the errno's text, SQLite's name of it), or is what
    /// follows one: a failed turn restarts the link, so a message in flight then is 7007 (the
    /// PowerAuth SDK's "not reachable"), and a daemon that stopped drops its connections.
    static func namesAFault(_ text: String) -> Bool {
        [
            "Input/output error", "No space left on device", "disk I/O error", "database or disk is full",
            "not enough space", "notReachable", "not reachable", "connection to",
        ].contains { text.contains($0) }
    }
}

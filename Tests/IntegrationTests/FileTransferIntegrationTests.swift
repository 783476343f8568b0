import Foundation
import LinkClient
import LinkControl
import LinkCrypto
import LinkJSON
import WireProtocol
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `transferFile` with real daemons: large files across link drops and SIGKILLs, cancel,
/// the errors of `file.transfer`, memory while a 1 GiB file crosses, both directions, and
/// full disks on either side.
final class FileTransferIntegrationTests: DurableTestCase {
    func testA200MiBFileArrivesIntactAcrossTwoLinkDropsAndAKillOfEachDaemon() throws {
        let (phone, watch, p, w) = try startDurablePair()
        let source = home + "/source.bin"
        let expected = try writeRandomFile(source, size: 200 << 20)
        // Slow the link so that every fault lands mid-transfer: the window of bytes in
        // flight makes the throughput about window / latency.
        _ = try p.call("link.set", ["latencyMs": 150])
        var events = try subscribed(phone)
        let started = Date()
        let id = try transferFile(p, source)
        try FileManager.default.removeItem(atPath: source)  // the outbox copy is what is sent

        var last = try progress(events, id, above: 0)
        var faults: [String] = []
        let dropAndRestore: [(String, ControlClient)] = [("the watch", w), ("the phone", p)]
        for (side, client) in dropAndRestore {
            _ = try client.call("link.set", ["up": false])
            eventually("the link to drop (\(side))", timeout: 10) { try p.status("link")?["connected"] == false }
            _ = try client.call("link.set", ["up": true])
            let (before, first) = try progressAcrossReconnect(events, id, seen: last)
            XCTAssertGreaterThan(before, 0)
            XCTAssertGreaterThanOrEqual(first, before, "after \(side) dropped the link, progress resumes from \(before), not from 0")
            faults.append("link dropped by \(side) at \(before), resumed at \(first)")
            last = try progress(events, id, above: first)
        }

        watch.kill9()
        try watch.startAndWait()
        var (before, first) = try progressAcrossReconnect(events, id, seen: last)
        XCTAssertGreaterThanOrEqual(first, before, "after the watch was killed, progress resumes from \(before)")
        faults.append("watchd killed at \(before), resumed at \(first)")
        last = try progress(events, id, above: first)

        phone.kill9()
        before = last
        while let event = try? events.nextEvent(timeoutSeconds: 1) {
            if event.name == "file.progress", event.data["transferId"] == .string(id) {
                before = max(before, event.data["completedBytes"]?.intValue ?? 0)
            }
        }
        try phone.startAndWait()
        let p2 = try client(phone)
        _ = try p2.call("link.set", ["latencyMs": 150])
        events = try subscribed(phone)
        first = try progress(events, id, above: 0)
        XCTAssertGreaterThanOrEqual(first, before, "after the phone was killed, progress resumes from \(before)")
        faults.append("phoned killed at \(before), resumed at \(first)")
        _ = try p2.call("link.set", ["latencyMs": 0])

        let finished = try events.waitForEvent("file.didFinish", timeoutSeconds: 120) { $0.data["transferId"] == .string(id) }
        XCTAssertNil(finished.data["error"])
        let seconds = Date().timeIntervalSince(started)
        print("file transfer 200 MiB across 2 link drops and 2 SIGKILLs: \(String(format: "%.1f", seconds)) s; \(faults.joined(separator: "; "))")

        let w2 = try client(watch)
        let files = try Received.items(w2, kind: "file")
        XCTAssertEqual(files.count, 1, "delivered exactly once: \(files)")
        XCTAssertEqual(files.first?["transferId"], .string(id))
        XCTAssertEqual(files.first?["totalBytes"], .int(200 << 20))
        let path = try XCTUnwrap(files.first?["path"]?.stringValue)
        XCTAssertEqual(try sha256(of: path), expected, "the received file is the sent one")
        XCTAssertEqual(try p2.call("file.outstanding")["transfers"], [])
        XCTAssertEqual(try directory(phone, "outbox"), [], "the outbox copy is gone")
        XCTAssertEqual(try directory(watch, "partial"), [], "no partial file is left")
    }

    func testCancelMidwayStopsTheTransferAndRemovesBothCopies() throws {
        let (phone, watch, p, w) = try startDurablePair()
        let source = home + "/cancel.bin"
        _ = try writeRandomFile(source, size: 64 << 20)
        _ = try p.call("link.set", ["latencyMs": 200])
        let phoneEvents = try subscribed(phone)
        let watchEvents = try subscribed(watch)
        let id = try transferFile(p, source, metadata: ["kind": "video"])
        XCTAssertEqual(try directory(phone, "outbox"), [id])
        _ = try progress(phoneEvents, id, above: 0)
        XCTAssertEqual(try directory(watch, "partial"), [id], "the watch holds part of the file")
        XCTAssertEqual(try p.call("file.cancel", ["transferId": .string(id)])["cancelled"], true)
        XCTAssertEqual(try directory(phone, "outbox"), [], "the outbox copy is deleted at once")
        XCTAssertEqual(try p.call("file.outstanding")["transfers"], [])
        eventually("the watch to discard its partial file", timeout: 10) { try self.directory(watch, "partial") == [] }
        _ = try p.call("link.set", ["latencyMs": 0])
        // Whatever was on the link has arrived by the time a message makes the round trip.
        _ = try p.call("message.send", ["message": ["after": "cancel"], "wantsReply": true])
        XCTAssertEqual(try Received.items(w, kind: "file"), [])
        XCTAssertEqual(try directory(watch, "inbox"), [])
        XCTAssertEqual(try p.call("file.cancel", ["transferId": .string(id)])["cancelled"], false, "already cancelled")
        XCTAssertEqual(try p.call("file.cancel", ["transferId": "no-such-transfer"])["cancelled"], false)
        // Barriers: the message each side receives last was sent after anything of the file.
        let watchSaw = try watchEvents.events(until: "message.received", timeoutSeconds: 10) {
            $0.data["message"] == ["after": "cancel"]
        }.map(\.name)
        XCTAssertFalse(watchSaw.contains("file.received"), "\(watchSaw)")
        _ = try w.call("message.send", ["message": ["barrier": "phone"]])
        let phoneSaw = try phoneEvents.events(until: "message.received", timeoutSeconds: 10) {
            $0.data["message"] == ["barrier": "phone"]
        }.map(\.name)
        XCTAssertFalse(phoneSaw.contains("file.didFinish"), "a cancelled transfer does not finish: \(phoneSaw)")
    }

    func testTransferErrors() throws {
        let (phone, _, _, _) = try startDurablePair(activatePhone: false, activateWatch: true)
        let p = try client(phone)
        let file = home + "/small.bin"
        _ = try writeRandomFile(file, size: 1_000)
        assertControlError("WCErrorDomain", 7004) { try p.call("file.transfer", ["path": .string(file)]) }
        _ = try p.call("session.activate")

        let missing = home + "/missing.bin"
        let error = try XCTUnwrap(controlError { try p.call("file.transfer", ["path": .string(missing)]) })
        XCTAssertEqual(error.code, 7013)
        XCTAssertEqual(error.name, "fileAccessDenied")
        XCTAssertTrue(error.message.contains(missing) && error.message.contains("No such file or directory"), error.message)
        assertControlError("WCErrorDomain", 7013) { try p.call("file.transfer", ["path": .string(self.home)]) }
        let fifo = home + "/fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        assertControlError("WCErrorDomain", 7013) { try p.call("file.transfer", ["path": .string(fifo)]) }

        assertControlError("WCErrorDomain", 7010) {
            try p.call("file.transfer", ["path": .string(file), "metadata": ["bad": .null]])
        }
        assertControlError("control", 3) { try p.call("file.transfer", ["path": "relative/path.bin"]) }
        assertControlError("control", 3) { try p.call("file.transfer", ["path": .string(file), "metadata": "not a dictionary"]) }
        assertControlError("control", 3) { try p.call("file.transfer", [:]) }
        assertControlError("control", 3) { try p.call("file.cancel", [:]) }
        XCTAssertEqual(try p.call("file.outstanding")["transfers"], [])
        XCTAssertEqual(try directory(phone, "outbox"), [], "a refused transfer leaves no copy")
        XCTAssertEqual(try p.status("role"), "phone", "the phone keeps serving")
    }

    func testA1GiBTransferKeepsBothDaemonsUnder64MiB() throws {
        let (phone, watch, p, w) = try startDurablePair()
        let source = home + "/big.bin"
        let expected = try writeLargeFile(source, size: 1 << 30)
        let events = try subscribed(phone)
        let sampler = RSSSampler(pids: [phone.pid, watch.pid])
        sampler.start()
        let started = Date()
        let id = try transferFile(p, source, timeout: 120)
        let copied = Date().timeIntervalSince(started)
        try FileManager.default.removeItem(atPath: source)
        var progressEvents = 0
        var finished = false
        while let event = try events.nextEvent(timeoutSeconds: 180) {
            if event.name == "file.progress" { progressEvents += 1 }
            if event.name == "file.didFinish", event.data["transferId"] == .string(id) {
                XCTAssertNil(event.data["error"])
                finished = true
                break
            }
        }
        XCTAssertTrue(finished, "file.didFinish of \(id) arrives")
        XCTAssertGreaterThan(progressEvents, 10, "file.progress reports the way")
        let seconds = Date().timeIntervalSince(started)
        let peaks = sampler.stop()
        let phonePeak = Double(peaks[0]) / 1024, watchPeak = Double(peaks[1]) / 1024
        print(
            "file transfer 1 GiB: phoned max RSS \(String(format: "%.1f", phonePeak)) MiB, watchd max RSS \(String(format: "%.1f", watchPeak)) MiB, \(String(format: "%.1f", seconds)) s (copy into the outbox \(String(format: "%.1f", copied)) s, \(sampler.samples) samples)"
        )
        XCTAssertGreaterThan(sampler.samples, 10)
        XCTAssertEqual(sampler.failedReads, 0, "every sample read both daemons' /proc status")
        if memoryIsMeasurable {
            XCTAssertLessThan(phonePeak, 64, "phoned's RSS stays under 64 MiB")
            XCTAssertLessThan(watchPeak, 64, "watchd's RSS stays under 64 MiB")
        } else {
            print("file transfer 1 GiB: RSS not checked under the \(sanitizer) sanitizer (its shadow memory counts)")
        }
        let files = try Received.items(w, kind: "file")
        XCTAssertEqual(files.count, 1)
        let path = try XCTUnwrap(files.first?["path"]?.stringValue)
        XCTAssertEqual(try sha256(of: path), expected)
        try? FileManager.default.removeItem(atPath: path)
    }

    func testASmallFileFromTheWatchReachesThePhoneWithItsMetadata() throws {
        let (phone, watch, p, w) = try startDurablePair()
        let source = home + "/from-watch.txt"
        let expected = try writeRandomFile(source, size: 100_000)
        let phoneEvents = try subscribed(phone)
        let watchEvents = try subscribed(watch)
        let metadata: JSONValue = ["workout": "run", "km": 5.5, "at": ["$date": "2026-11-30T07:00:00.000Z"]]
        let id = try transferFile(w, source, metadata: metadata)
        let received = try phoneEvents.waitForEvent("file.received", timeoutSeconds: 20)
        XCTAssertEqual(received.data["transferId"], .string(id))
        XCTAssertEqual(received.data["metadata"], metadata)
        XCTAssertEqual(received.data["totalBytes"], 100_000)
        let path = try XCTUnwrap(received.data["path"]?.stringValue)
        XCTAssertTrue(path.hasPrefix(phone.stateDirectory + "/files/inbox/") && path.hasSuffix("from-watch.txt"), path)
        XCTAssertEqual(try sha256(of: path), expected)
        XCTAssertEqual(try watchEvents.waitForEvent("file.didFinish", timeoutSeconds: 10).data, ["transferId": .string(id)])
        let listed = try Received.items(p, kind: "file")
        XCTAssertEqual(listed.map { $0["transferId"] }, [.string(id)])
        XCTAssertEqual(listed.first?["path"], .string(path))
        XCTAssertEqual(try w.call("file.outstanding")["transfers"], [])
        XCTAssertEqual(try p.status("hasContentPending"), false)
    }

    func testAFileWaitsForTheWatchSessionToBeActivated() throws {
        let (phone, watch, p, _) = try startDurablePair(activatePhone: true, activateWatch: false)
        let source = home + "/early.bin"
        let expected = try writeRandomFile(source, size: 300_000)
        let phoneEvents = try subscribed(phone)
        let id = try transferFile(p, source)
        _ = try phoneEvents.waitForEvent("file.didFinish", timeoutSeconds: 20) { $0.data["transferId"] == .string(id) }
        let w = try client(watch)
        XCTAssertEqual(try w.status("hasContentPending"), true)
        XCTAssertEqual(try Received.items(w, kind: "file"), [])
        let watchEvents = try subscribed(watch)
        _ = try w.call("session.activate")
        let received = try watchEvents.waitForEvent("file.received", timeoutSeconds: 10)
        XCTAssertEqual(received.data["transferId"], .string(id))
        XCTAssertEqual(try sha256(of: try XCTUnwrap(received.data["path"]?.stringValue)), expected)
        XCTAssertEqual(try w.status("hasContentPending"), false)
    }

    func testAFullDiskOnTheSenderIsInsufficientSpaceAndNothingIsKept() throws {
        let phone = restartable("phoned", logLevel: "info")
        let watch = restartable("watchd", logLevel: "info")
        // 8 MiB in the shell's 512-byte blocks.
        try phone.startAndWait(fileSizeLimitBlocks: 16_384)
        try watch.startAndWait()
        let p = try client(phone)
        eventually("both sides reachable", timeout: 10) { try p.status("isReachable") == true }
        let large = home + "/large.bin"
        _ = try writeRandomFile(large, size: 12 << 20)
        let error = try XCTUnwrap(controlError { try p.call("file.transfer", ["path": .string(large)], timeoutSeconds: 30) })
        XCTAssertEqual(error.code, 7015, "\(error)")
        XCTAssertEqual(error.name, "insufficientSpace")
        XCTAssertEqual(try directory(phone, "outbox"), [], "the partial copy is removed")
        XCTAssertEqual(try p.call("file.outstanding")["transfers"], [])
        XCTAssertTrue(phone.isRunning)

        let small = home + "/small.bin"
        let expected = try writeRandomFile(small, size: 1 << 20)
        let watchEvents = try subscribed(watch)
        let id = try transferFile(p, small)
        let received = try watchEvents.waitForEvent("file.received", timeoutSeconds: 20)
        XCTAssertEqual(received.data["transferId"], .string(id))
        XCTAssertEqual(try sha256(of: try XCTUnwrap(received.data["path"]?.stringValue)), expected)
    }

    func testAKillDuringTheCopyLeavesNeitherACopyNorATransfer() throws {
        let (phone, _, _, _) = try startDurablePair()
        let source = home + "/slow.bin"
        _ = try writeLargeFile(source, size: 256 << 20)
        let caller = try client(phone)
        let outcome = Locked<Result<JSONObject, Error>?>(nil)
        let returned = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { try caller.call("file.transfer", ["path": .string(source)], timeoutSeconds: 30) }
            outcome.withValue { $0 = result }
            returned.signal()
        }
        eventually("the copy to start") { try self.directory(phone, "outbox").count == 1 }
        phone.kill9()
        // The call returns only now, whichever way: its answer is read after it has come.
        XCTAssertEqual(returned.wait(timeout: .now() + 30), .success, "the call returns once the daemon is gone")
        switch outcome.current {
        case .failure(let error as ControlClientError):
            XCTAssertEqual(error, .connectionClosed("the daemon closed the connection"), "killed during the copy: never accepted")
        case let other:
            XCTFail("killed during the copy, the transfer must not be accepted; got \(String(describing: other))")
        }
        try phone.startAndWait()
        XCTAssertEqual(try directory(phone, "outbox"), [], "the unfinished copy is removed at start")
        XCTAssertEqual(try client(phone).call("file.outstanding")["transfers"], [])
    }

    // MARK: - Helpers

    private func transferFile(
        _ client: ControlClient, _ path: String, metadata: JSONValue? = nil,
        timeout: Double = 60
    ) throws -> String {
        var args: JSONObject = ["path": .string(path)]
        if let metadata { args["metadata"] = metadata }
        let result = try client.call("file.transfer", args, timeoutSeconds: timeout)
        return try XCTUnwrap(result["transferId"]?.stringValue, "\(result)")
    }

    /// The `completedBytes` of the next `file.progress` of `id` above `above`.
    private func progress(_ events: ControlClient, _ id: String, above: Int64) throws -> Int64 {
        let event = try events.waitForEvent("file.progress", timeoutSeconds: 60) {
            $0.data["transferId"] == .string(id) && ($0.data["completedBytes"]?.intValue ?? 0) > above
        }
        return event.data["completedBytes"]?.intValue ?? 0
    }

    /// Reads the phone's events through a link drop: the highest progress of `id` before the
    /// link came back (at least `seen`), and the first progress after.
    private func progressAcrossReconnect(_ events: ControlClient, _ id: String, seen: Int64) throws -> (Int64, Int64) {
        var before = seen
        var wentDown = false, cameBack = false
        let deadline = Date(timeIntervalSinceNow: 60)
        while let event = try events.nextEvent(timeoutSeconds: max(0, deadline.timeIntervalSinceNow)) {
            switch event.name {
            case "link.stateDidChange":
                if event.data["connected"] == false { wentDown = true } else if wentDown { cameBack = true }
            case "file.progress" where event.data["transferId"] == .string(id):
                let completed = event.data["completedBytes"]?.intValue ?? 0
                if cameBack { return (before, completed) }
                before = max(before, completed)
            default:
                break
            }
        }
        throw HarnessError("no progress of \(id) after the link came back (went down: \(wentDown), came back: \(cameBack))")
    }

    /// The names in `<state>/files/<name>` of `daemon`.
    private func directory(_ daemon: RestartableDaemon, _ name: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/files/" + name).sorted()
    }

    private func controlError(_ body: () throws -> Any) -> ControlError? {
        do {
            let value = try body()
            XCTFail("expected an error, got \(value)")
        } catch let error as ControlError {
            return error
        } catch {
            XCTFail("expected a ControlError, got \(error)")
        }
        return nil
    }
}

/// Writes `size` bytes from `/dev/urandom` to `path`; returns their SHA-256.
func writeRandomFile(_ path: String, size: Int) throws -> [UInt8] {
    let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
    defer { try? random.close() }
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? output.close() }
    let digest = SHA256Digest()
    var written = 0
    while written < size {
        let chunk = try random.read(upToCount: min(1 << 20, size - written)) ?? Data()
        let bytes = [UInt8](chunk)
        digest.update(bytes)
        try output.write(contentsOf: chunk)
        written += bytes.count
    }
    return digest.finalize()
}

/// Writes `size` bytes to `path`: one random MiB repeated, each copy numbered in its first
/// eight bytes so that no two MiB are alike; returns their SHA-256.
func writeLargeFile(_ path: String, size: Int) throws -> [UInt8] {
    var block = [UInt8](try writeRandomBlock())
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? output.close() }
    let digest = SHA256Digest()
    var index: UInt64 = 0
    var written = 0
    while written < size {
        withUnsafeBytes(of: index.bigEndian) { block.replaceSubrange(0..<8, with: $0) }
        let count = min(block.count, size - written)
        let piece = Array(block.prefix(count))
        digest.update(piece)
        try output.write(contentsOf: Data(piece))
        written += count
        index += 1
    }
    return digest.finalize()
}

private func writeRandomBlock() throws -> Data {
    let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
    defer { try? random.close() }
    return try random.read(upToCount: 1 << 20) ?? Data()
}

/// The SHA-256 of the file at `path`, read 1 MiB at a time.
func sha256(of path: String) throws -> [UInt8] {
    let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    defer { try? input.close() }
    let digest = SHA256Digest()
    while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
        chunk.withUnsafeBytes { digest.update($0) }
    }
    return digest.finalize()
}

/// Samples `VmRSS` of some processes from /proc every 100 ms on a thread of its own and
/// keeps the highest value of each, in KiB.
final class RSSSampler: @unchecked Sendable {
    private let pids: [Int32]
    private let state: Locked<(peaks: [Int], samples: Int, failedReads: Int, running: Bool)>
    private let done = DispatchSemaphore(value: 0)

    init(pids: [Int32]) {
        self.pids = pids
        state = Locked((Array(repeating: 0, count: pids.count), 0, 0, true))
    }

    var samples: Int { state.current.samples }
    /// Samples where a daemon's `/proc/PID/status` could not be read: they are not counted as 0.
    var failedReads: Int { state.current.failedReads }

    func start() {
        Thread.detachNewThread { [self] in
            while state.current.running {
                let values = pids.map(residentKilobytes)
                state.withValue { current in
                    for (index, value) in values.enumerated() {
                        guard let value else { current.failedReads += 1; continue }
                        current.peaks[index] = max(current.peaks[index], value)
                    }
                    current.samples += 1
                }
                usleep(100_000)
            }
            done.signal()
        }
    }

    /// Stops sampling; the peaks in KiB, in the order of the pids.
    func stop() -> [Int] {
        state.withValue { $0.running = false }
        done.wait()
        return state.current.peaks
    }
}

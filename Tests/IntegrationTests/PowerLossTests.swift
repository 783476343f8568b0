import Foundation
import LinkClient
import LinkControl
import LinkJSON
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Power cuts: either device loses power at a seeded random moment (the daemon dies with
/// SIGKILL and its disk forgets everything not synced, `PowerLossFileSystem`) while userInfo,
/// application context, files and PowerAuth tokens cross both ways. After every restart nothing
/// the sender was told is accepted is missing, nothing arrives twice, queues keep their order,
/// received files are whole, and the daemon starts on what the cut left.
///
/// `scripts/power-loss.sh [--cuts N] [--seed S]` runs it alone (WATCHLINK_POWER_CUTS,
/// WATCHLINK_POWER_SEED); its last line is the summary this test prints.
final class PowerLossTests: PowerLossTestCase {
    private let instance: JSONObject = ["instanceId": "main"]

    func testNothingAcknowledgedIsLostAcrossPowerCuts() throws {
        let seed = randomSeed("WATCHLINK_POWER_SEED")
        let environment = ProcessInfo.processInfo.environment
        let minimumCuts = max(2, environment["WATCHLINK_POWER_CUTS"].flatMap { Int($0) } ?? 20)
        let phone = restartable("phoned", logLevel: "info")
        let watch = restartable("watchd", logLevel: "info")
        _ = try mountDisk(for: phone)
        _ = try mountDisk(for: watch)
        try phone.startAndWait()
        try watch.startAndWait()
        let instance = instance
        let register: (RestartableDaemon) throws -> Void = { daemon in
            let client = try daemon.client()
            defer { client.close() }
            _ = try client.call("pa.instance.add", instance)
        }
        try register(phone)
        try register(watch)
        do {
            let p = try client(phone)
            eventually("both sides reachable", timeout: 15) { try p.status("isReachable") == true }
            _ = try p.call("pa.activation.create", ["instanceId": "main", "commit": true])
            _ = try p.call("pa.status.sendToWatch", ["instanceId": "main", "mode": "completion"])
        }

        let stop = Locked(false)
        let userInfos = [
            TransferStream(direction: "p2w", sender: phone, minimumAttempts: 150, maximumAttempts: 600),
            TransferStream(direction: "w2p", sender: watch, minimumAttempts: 150, maximumAttempts: 600),
        ]
        let contexts = [
            TransferStream(
                direction: "p2w", sender: phone, minimumAttempts: 60, maximumAttempts: 300,
                op: "context.update", argument: "context"),
            TransferStream(
                direction: "w2p", sender: watch, minimumAttempts: 60, maximumAttempts: 300,
                op: "context.update", argument: "context"),
        ]
        let files = [
            FileStream(direction: "p2w", sender: phone, sources: makeDirectory(), minimumAttempts: 8, maximumAttempts: 40),
            FileStream(direction: "w2p", sender: watch, sources: makeDirectory(), minimumAttempts: 8, maximumAttempts: 40),
        ]
        let tokens = TokenStream(phone: phone, watch: watch, instance: instance, minimumAttempts: 12, maximumAttempts: 80)
        let cutter = Killer(
            daemons: [phone, watch], seed: seed, pause: 50_000...600_000, fault: { try self.cutPower($0) },
            restarted: register)
        let group = DispatchGroup()
        for stream in userInfos + contexts {
            DispatchQueue.global().async(group: group) { stream.run { stop.current } }
        }
        for stream in files {
            DispatchQueue.global().async(group: group) { stream.run { stop.current } }
        }
        DispatchQueue.global().async(group: group) { tokens.run { stop.current } }
        let started = Date()
        DispatchQueue.global().async(group: group) {
            cutter.run {
                let cuts = cutter.kills
                return cuts.reduce(0, +) >= minimumCuts && cuts.allSatisfy { $0 >= minimumCuts / 3 }
                    && userInfos.allSatisfy { $0.attempts >= $0.minimumAttempts } && contexts.allSatisfy { $0.attempts >= $0.minimumAttempts }
                    && files.allSatisfy { $0.attempts >= $0.minimumAttempts } && tokens.attempts >= tokens.minimumAttempts
                    || userInfos.contains { $0.failure != nil } || contexts.contains { $0.failure != nil }
            }
            stop.withValue { $0 = true }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 300), .success, "senders and the power cuts finish")
        stop.withValue { $0 = true }
        if let failure = cutter.failure { return XCTFail("a daemon did not start on what a power cut left: \(failure)") }
        for failure in (userInfos + contexts).compactMap(\.failure) + files.compactMap(\.failure) + [tokens.failure].compactMap({ $0 }) {
            return XCTFail(failure)
        }
        let streaming = Date().timeIntervalSince(started)

        let p = try client(phone, timeout: 30)
        let w = try client(watch, timeout: 30)
        eventually("the queues to drain", timeout: 90) {
            try p.status("outstandingUserInfoTransfers") == 0 && w.status("outstandingUserInfoTransfers") == 0
                && p.call("file.outstanding")["transfers"] == [] && w.call("file.outstanding")["transfers"] == []
        }
        var tally = Tally()

        // userInfo: exactly once, in order.
        for (stream, receiver) in zip(userInfos, [w, p]) {
            let numbers = try Received.userInfos(receiver).compactMap {
                $0["dir"] == .string(stream.direction) ? $0["n"]?.intValue.map(Int.init) : nil
            }
            let seen = Set(numbers)
            let lost = stream.acknowledged.filter { !seen.contains($0) }
            let outOfOrder = zip(numbers, numbers.dropFirst()).filter { $0.0 >= $0.1 }
            XCTAssertEqual(lost, [], "\(stream.direction) userInfo: acknowledged, never received")
            XCTAssertEqual(numbers.count, seen.count, "\(stream.direction) userInfo: received more than once")
            XCTAssertTrue(outOfOrder.isEmpty, "\(stream.direction) userInfo out of order: \(outOfOrder.prefix(10))")
            tally.add(acknowledged: stream.acknowledged.count, lost: lost.count, duplicated: numbers.count - seen.count)
        }

        // Application context: latest wins, never back; the newest acknowledged (or a later one) arrives.
        for (stream, (sender, receiver)) in zip(contexts, [(p, w), (w, p)]) {
            let newest = try XCTUnwrap(sender.call("context.get")["applicationContext"]?["n"]?.intValue, "\(stream.direction) context")
            XCTAssertGreaterThanOrEqual(newest, Int64(stream.acknowledged.last ?? 0), "\(stream.direction): the newest acknowledged context is kept")
            eventually("\(stream.direction): the newest context to arrive", timeout: 30) {
                try receiver.call("context.get")["receivedApplicationContext"]?["n"]?.intValue == newest
            }
            let received = try Received.items(receiver, kind: "applicationContext").compactMap { $0["applicationContext"]?["n"]?.intValue }
            let backwards = zip(received, received.dropFirst()).filter { $0.0 >= $0.1 }
            XCTAssertTrue(backwards.isEmpty, "\(stream.direction): the received context went back or repeated: \(backwards.prefix(10))")
            let lost = stream.acknowledged.filter { Int64($0) > newest }.count
            tally.add(acknowledged: stream.acknowledged.count, lost: lost, duplicated: 0)
        }

        // Files: each acknowledged one received once, whole.
        for (stream, receiver) in zip(files, [w, p]) {
            let received = try Received.items(receiver, kind: "file")
            var byId: [String: [String]] = [:]
            for item in received {
                guard let id = item["transferId"]?.stringValue, let path = item["path"]?.stringValue else { continue }
                byId[id, default: []].append(path)
            }
            var lost = 0, duplicated = 0
            for (id, expected) in stream.acknowledged {
                guard let paths = byId[id] else {
                    lost += 1
                    XCTFail("\(stream.direction) file \(id): acknowledged, never received")
                    continue
                }
                duplicated += paths.count - 1
                XCTAssertEqual(paths.count, 1, "\(stream.direction) file \(id) received \(paths.count) times")
                guard FileManager.default.fileExists(atPath: paths[0]) else {
                    lost += 1
                    XCTFail("\(stream.direction) file \(id) delivered as \(paths[0]), which does not exist")
                    continue
                }
                XCTAssertEqual(try sha256(of: paths[0]), expected, "\(stream.direction) file \(id) is not the one sent")
            }
            tally.add(acknowledged: stream.acknowledged.count, lost: lost, duplicated: duplicated)
        }

        // PowerAuth tokens: every acknowledged change holds on its side.
        let phoneTokens = Set(try p.call("pa.token.list", instance)["tokens"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        let watchTokens = Set(try w.call("pa.token.local", instance)["tokens"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        var tokenLost = 0
        for name in tokens.created where !phoneTokens.contains(name) {
            tokenLost += 1
            XCTFail("token \(name): the phone said it was created; it is gone")
        }
        for (name, present) in tokens.settledOnWatch where watchTokens.contains(name) != present {
            tokenLost += 1
            XCTFail("token \(name): the watch \(present ? "took it" : "removed it") and said so; now it \(present ? "is gone" : "is back")")
        }
        tally.add(acknowledged: tokens.created.count + tokens.settledOnWatch.count, lost: tokenLost, duplicated: 0)
        XCTAssertEqual(tally.lost, 0, "nothing acknowledged is lost")

        let cuts = cutter.kills
        print(
            "power loss seed=\(seed) | \(cuts[0]) cuts of phoned, \(cuts[1]) of watchd | userInfo attempts \(userInfos.map(\.attempts)), "
                + "contexts \(contexts.map(\.attempts)), files \(files.map(\.attempts)), token steps \(tokens.attempts) | "
                + "streaming \(String(format: "%.1f", streaming)) s")
        print(
            "cuts \(cuts.reduce(0, +)), acknowledged \(tally.acknowledged), delivered \(tally.acknowledged - tally.lost), "
                + "lost \(tally.lost), duplicated \(tally.duplicated)")
    }
}

private struct Tally {
    var acknowledged = 0, lost = 0, duplicated = 0
    mutating func add(acknowledged: Int, lost: Int, duplicated: Int) {
        self.acknowledged += acknowledged
        self.lost += lost
        self.duplicated += duplicated
    }
}

/// One direction of file transfers: a new 48 KiB random file each attempt; acknowledged when
/// `file.transfer` returned its transferId (the daemon has its own copy then).
final class FileStream: @unchecked Sendable {
    let direction: String
    let sender: RestartableDaemon
    let sources: String
    let minimumAttempts: Int
    let maximumAttempts: Int
    private let state = Locked((attempts: 0, acknowledged: [(String, [UInt8])](), failure: String?.none))

    init(direction: String, sender: RestartableDaemon, sources: String, minimumAttempts: Int, maximumAttempts: Int) {
        self.direction = direction
        self.sender = sender
        self.sources = sources
        self.minimumAttempts = minimumAttempts
        self.maximumAttempts = maximumAttempts
    }

    var attempts: Int { state.current.attempts }
    var acknowledged: [(String, [UInt8])] { state.current.acknowledged }
    var failure: String? { state.current.failure }

    func run(stopped: () -> Bool) {
        let client = ReconnectingClient(sender)
        defer { client.close() }
        var n = 0
        while n < maximumAttempts && (n < minimumAttempts || !stopped()) {
            n += 1
            state.withValue { $0.attempts = n }
            let path = "\(sources)/\(direction)-\(n).bin"
            do {
                let digest = try writeRandomFile(path, size: 48 << 10)
                if let id = client.acknowledged("file.transfer", ["path": .string(path), "metadata": ["n": .int(Int64(n))]])?["transferId"]?.stringValue {
                    state.withValue { $0.acknowledged.append((id, digest)) }
                }
            } catch {
                state.withValue { $0.failure = "\(direction) file \(n): \(error)" }
                return
            }
            usleep(100_000)
        }
    }
}

/// PowerAuth token changes both ways: the phone creates a token and sends it to the watch, or
/// the watch asks the phone for it; now and then the phone removes an earlier one from the
/// watch. What each side said it did is what must hold there after the cuts.
final class TokenStream: @unchecked Sendable {
    let phone: RestartableDaemon
    let watch: RestartableDaemon
    let instance: JSONObject
    let minimumAttempts: Int
    let maximumAttempts: Int
    private struct State {
        var attempts = 0
        var created: [String] = []
        /// The last change to a token on the watch that was attempted, and whether it was acknowledged.
        var lastOnWatch: [String: (present: Bool, acknowledged: Bool)] = [:]
    }
    private let state = Locked(State())

    init(phone: RestartableDaemon, watch: RestartableDaemon, instance: JSONObject, minimumAttempts: Int, maximumAttempts: Int) {
        self.phone = phone
        self.watch = watch
        self.instance = instance
        self.minimumAttempts = minimumAttempts
        self.maximumAttempts = maximumAttempts
    }

    var attempts: Int { state.current.attempts }
    var created: [String] { state.current.created }
    /// The tokens whose last attempted change on the watch was acknowledged: present or removed.
    var settledOnWatch: [String: Bool] {
        state.current.lastOnWatch.compactMapValues { $0.acknowledged ? $0.present : nil }
    }
    var failure: String? { nil }

    func run(stopped: () -> Bool) {
        let p = ReconnectingClient(phone)
        let w = ReconnectingClient(watch)
        defer {
            p.close()
            w.close()
        }
        var n = 0
        while n < maximumAttempts && (n < minimumAttempts || !stopped()) {
            n += 1
            state.withValue { $0.attempts = n }
            let name = "t\(n)"
            func args(_ name: String, _ extra: JSONObject = [:]) -> JSONObject {
                var object = instance
                object["name"] = .string(name)
                for key in extra.keys { object[key] = extra[key] }
                return object
            }
            guard p.acknowledged("pa.token.create", args(name)) != nil else { continue }
            state.withValue { $0.created.append(name) }
            let acknowledged: Bool
            if n % 2 == 1 {
                acknowledged = p.acknowledged("pa.token.sendToWatch", args(name, ["mode": "completion"]))?["delivered"] == true
            } else {
                acknowledged = w.acknowledged("pa.token.request", args(name))?["tokenIdentifier"]?.stringValue != nil
            }
            state.withValue { $0.lastOnWatch[name] = (true, acknowledged) }
            if n % 4 == 0, n > 2 {
                let earlier = "t\(n - 2)"
                let removed = p.acknowledged("pa.token.removeFromWatch", args(earlier, ["mode": "completion"]))?["delivered"] == true
                state.withValue { $0.lastOnWatch[earlier] = (false, removed) }
            }
        }
    }
}

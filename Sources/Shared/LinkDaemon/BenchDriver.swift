import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import LinkStore
import WireProtocol

/// The `bench.*` ops: load generated inside the daemon, so the control socket is not on
/// the measured path. Times are read from the loop's monotonic clock.
final class BenchDriver {
    private unowned let daemon: Daemon
    private var running = false

    init(daemon: Daemon) {
        self.daemon = daemon
    }

    enum Kind: String {
        case data
        case dictionary
    }

    func handle(_ request: ControlRequest, args: Arguments, respond: @escaping (Result<JSONObject, ControlError>) -> Void) throws {
        guard !running else {
            throw ControlError.control(.busy, "\(request.op): a benchmark is already running")
        }
        switch request.op {
        case "bench.roundTrip":
            try args.rejectUnknownKeys(allowed: ["size", "count", "kind"])
            let payload = try Self.payload(args)
            let count = Int(try args.optionalInt("count", range: 1...10_000_000) ?? 10_000)
            roundTrips(payload: payload, count: count, respond: respond)
        case "bench.oneWay":
            try args.rejectUnknownKeys(allowed: ["size", "count", "kind", "window"])
            let payload = try Self.payload(args)
            let count = Int(try args.optionalInt("count", range: 1...10_000_000) ?? 100_000)
            // By default at most 1 MiB of payload in flight (what the link's socket buffer
            // holds: more only queues bytes in memory) and at most 4,096 messages.
            let defaultWindow = max(16, min(4_096, (1 << 20) / max(1, payload.bytes.count)))
            let window = Int(try args.optionalInt("window", range: 1...4_096) ?? Int64(defaultWindow))
            oneWay(payload: payload, count: count, window: window, respond: respond)
        case "bench.userInfo":
            try args.rejectUnknownKeys(allowed: ["size", "count", "batch"])
            let size = Int(try args.optionalInt("size", range: 1...65_000) ?? 100)
            let count = Int(try args.optionalInt("count", range: 1...10_000_000) ?? 50_000)
            let batch = Int(try args.optionalInt("batch", range: 1...65_536) ?? 512)
            userInfo(size: size, count: count, batch: batch, respond: respond)
        default:
            throw ControlError.control(.unknownOp, "unknown op '\(request.op)' (known: bench.roundTrip, bench.oneWay, bench.userInfo)")
        }
    }

    /// A message of about `size` bytes: raw Data, or a 10-key dictionary.
    static func payload(_ args: Arguments) throws -> MessagePayload {
        let size = Int(try args.optionalInt("size", range: 1...65_000) ?? 64)
        let kindName = try args.optionalString("kind") ?? "data"
        guard let kind = Kind(rawValue: kindName) else {
            throw ControlError.control(.invalidArgument, "\(args.op): 'kind' must be data or dictionary, got '\(kindName)'")
        }
        switch kind {
        case .data:
            return .data([UInt8](repeating: 0x5A, count: size))
        case .dictionary:
            return .dictionary(try dictionary(size: size))
        }
    }

    /// Ten keys, each with its own string: the binary property list stores equal objects
    /// once, so ten equal strings would encode to a tenth of `size`.
    static func dictionary(size: Int) throws -> [UInt8] {
        let valueLength = max(1, (size - 70) / 10)
        var dictionary: [String: PropertyListValue] = [:]
        for key in 0..<10 {
            let letter = Character(Unicode.Scalar(UInt8(ascii: "a") + UInt8(key)))
            dictionary["k\(key)"] = .string(String(repeating: letter, count: valueLength))
        }
        return try PropertyListCodec.encode(dictionary)
    }

    private func roundTrips(payload: MessagePayload, count: Int, respond: @escaping (Result<JSONObject, ControlError>) -> Void) {
        running = true
        var latencies: [UInt64] = []
        latencies.reserveCapacity(count)
        var started: UInt64 = 0
        func next() {
            started = daemon.loop.nowNanoseconds
            daemon.submit(.sendMessage(payload, wantsReply: true, timeoutMilliseconds: 10_000)) { [self] result in
                if case .failure(let error) = result { return finish(.failure(ControlOps.controlError(error))) }
                latencies.append(daemon.loop.nowNanoseconds - started)
                if latencies.count == count {
                    finish(.success(Self.summary(latencies, bytes: payload.bytes.count)))
                } else {
                    next()
                }
            }
        }
        func finish(_ result: Result<JSONObject, ControlError>) {
            running = false
            respond(result)
        }
        next()
    }

    private func oneWay(payload: MessagePayload, count: Int, window: Int, respond: @escaping (Result<JSONObject, ControlError>) -> Void) {
        running = true
        var sent = 0, done = 0
        var failed = false
        let start = daemon.loop.nowNanoseconds
        func pump() {
            while sent < count, sent - done < window, !failed {
                sent += 1
                daemon.submit(.sendMessage(payload, wantsReply: false, timeoutMilliseconds: 30_000)) { [self] result in
                    guard !failed else { return }
                    if case .failure(let error) = result {
                        failed = true
                        running = false
                        return respond(.failure(ControlOps.controlError(error)))
                    }
                    done += 1
                    if done == count {
                        running = false
                        let seconds = Double(daemon.loop.nowNanoseconds - start) / 1e9
                        respond(.success(["count": .int(Int64(count)), "bytes": .int(Int64(payload.bytes.count)),
                                          "seconds": .double(seconds), "messagesPerSecond": .double(Double(count) / seconds)]))
                    } else {
                        pump()
                    }
                }
            }
        }
        pump()
    }

    private func userInfo(size: Int, count: Int, batch: Int, respond: @escaping (Result<JSONObject, ControlError>) -> Void) {
        let payload: [UInt8]
        do {
            payload = try PropertyListCodec.encode(["blob": .data([UInt8](repeating: 0x42, count: max(1, size - 20)))])
        } catch {
            return respond(.failure(.control(.internalError, "\(error)")))
        }
        running = true
        // Transfers queued before the benchmark finish first (FIFO): they are skipped.
        let earlier = daemon.session.status().outstandingUserInfoTransfers
        var accepted = 0, finished = -earlier
        var failed = false
        let start = daemon.loop.nowNanoseconds
        func complete(_ result: Result<JSONObject, ControlError>) {
            daemon.notificationObserver = nil
            running = false
            respond(result)
        }
        daemon.notificationObserver = { notification in
            guard case .userInfoDidFinish = notification else { return }
            finished += 1
            if finished == count, !failed {
                let seconds = Double(self.daemon.loop.nowNanoseconds - start) / 1e9
                complete(.success(["count": .int(Int64(count)), "bytes": .int(Int64(payload.count)),
                                   "seconds": .double(seconds), "transfersPerSecond": .double(Double(count) / seconds)]))
            }
        }
        func submitBatch() {
            guard !failed else { return }
            let end = min(count, accepted + batch)
            while accepted < end {
                accepted += 1
                daemon.submit(.transferUserInfo(payload)) { result in
                    switch result {
                    case .failure(let error):
                        if !failed { failed = true; complete(.failure(ControlOps.controlError(error))) }
                    default:
                        break
                    }
                }
            }
            // One batch a loop turn: each turn's transfers commit together.
            if accepted < count { daemon.loop.execute { submitBatch() } }
        }
        submitBatch()
    }

    static func summary(_ latencies: [UInt64], bytes: Int) -> JSONObject {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1_000
        }
        let mean = Double(sorted.reduce(0, +)) / Double(sorted.count) / 1_000
        return ["count": .int(Int64(sorted.count)), "bytes": .int(Int64(bytes)),
                "p50Us": .double(percentile(0.50)), "p99Us": .double(percentile(0.99)),
                "meanUs": .double(mean), "minUs": .double(Double(sorted.first ?? 0) / 1_000),
                "maxUs": .double(Double(sorted.last ?? 0) / 1_000)]
    }
}

import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import LinkStore
import WireProtocol

/// The `bench.*` ops: load generated inside the daemon, so the control socket is not on
/// the measured path. Times are read from the loop's monotonic clock. A feature like any
/// other: it submits to the app's session and observes its notifications.
public final class BenchFeature: DaemonFeature {
    private var context: FeatureContext!
    private var running = false
    /// `bench.userInfo` counts `userInfo.didFinish` notifications while it runs.
    private var finishedObserver: (() -> Void)?

    public init() {}

    public func start(_ context: FeatureContext) throws {
        self.context = context
    }

    public func observe(_ notification: SessionNotification) {
        if case .userInfoDidFinish = notification { finishedObserver?() }
    }

    public var operations: [ControlOperation] {
        let size: ControlOperation.Argument = .optional("size", .integer(1...65_000), "payload bytes")
        let kind: ControlOperation.Argument = .optional("kind", .string, "data or dictionary")
        return [
            ControlOperation(
                "bench.roundTrip", summary: "messages with replies, one at a time, timed inside the daemon",
                arguments: [size, .optional("count", .integer(1...10_000_000)), kind]
            ) { [unowned self] call in
                try self.requireIdle(call)
                let payload = try Self.payload(call.args)
                self.roundTrips(payload: payload, count: Int(try call.args.optionalInt("count") ?? 10_000), respond: call.respond)
            },
            ControlOperation(
                "bench.oneWay", summary: "messages without replies, pipelined, timed inside the daemon",
                arguments: [
                    size, .optional("count", .integer(1...10_000_000)), kind,
                    .optional("window", .integer(1...4_096)),
                ]
            ) { [unowned self] call in
                try self.requireIdle(call)
                let payload = try Self.payload(call.args)
                // By default at most 1 MiB of payload in flight (what the link's socket buffer
                // holds: more only queues bytes in memory) and at most 4,096 messages.
                let defaultWindow = max(16, min(4_096, (1 << 20) / max(1, payload.bytes.count)))
                self.oneWay(
                    payload: payload, count: Int(try call.args.optionalInt("count") ?? 100_000),
                    window: Int(try call.args.optionalInt("window") ?? Int64(defaultWindow)), respond: call.respond)
            },
            ControlOperation(
                "bench.userInfo", summary: "durable userInfo transfers end to end, timed inside the daemon",
                arguments: [
                    size, .optional("count", .integer(1...10_000_000)),
                    .optional("batch", .integer(1...65_536)),
                ]
            ) { [unowned self] call in
                try self.requireIdle(call)
                self.userInfo(
                    size: Int(try call.args.optionalInt("size") ?? 100), count: Int(try call.args.optionalInt("count") ?? 50_000),
                    batch: Int(try call.args.optionalInt("batch") ?? 512), respond: call.respond)
            },
        ]
    }

    private func requireIdle(_ call: OperationCall) throws {
        guard !running else { throw ControlError.control(.busy, "\(call.op): a benchmark is already running") }
    }

    enum Kind: String {
        case data
        case dictionary
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
        // One completion for every round trip, made once: the driver's own allocation a round
        // trip is not WatchLink's cost.
        var completion: ((Result<CommandResult, SessionError>) -> Void)?
        func next() {
            started = context.loop.nowNanoseconds
            context.submit(.sendMessage(payload, wantsReply: true, timeoutMilliseconds: 10_000), completion!)
        }
        func finish(_ result: Result<JSONObject, ControlError>) {
            running = false
            completion = nil
            respond(result)
        }
        completion = { [self] result in
            if case .failure(let error) = result { return finish(.failure(error.controlError)) }
            latencies.append(context.loop.nowNanoseconds - started)
            if latencies.count == count {
                finish(.success(Self.summary(latencies, bytes: payload.bytes.count)))
            } else {
                next()
            }
        }
        next()
    }

    private func oneWay(payload: MessagePayload, count: Int, window: Int, respond: @escaping (Result<JSONObject, ControlError>) -> Void) {
        running = true
        var sent = 0, done = 0
        var failed = false
        let start = context.loop.nowNanoseconds
        func pump() {
            while sent < count, sent - done < window, !failed {
                sent += 1
                context.submit(.sendMessage(payload, wantsReply: false, timeoutMilliseconds: 30_000)) { [self] result in
                    guard !failed else { return }
                    if case .failure(let error) = result {
                        failed = true
                        running = false
                        return respond(.failure(error.controlError))
                    }
                    done += 1
                    if done == count {
                        running = false
                        let seconds = Double(context.loop.nowNanoseconds - start) / 1e9
                        respond(
                            .success([
                                "count": .int(Int64(count)), "bytes": .int(Int64(payload.bytes.count)),
                                "seconds": .double(seconds), "messagesPerSecond": .double(Double(count) / seconds),
                            ]))
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
        let earlier = context.status().outstandingUserInfoTransfers
        var accepted = 0, finished = -earlier
        var failed = false
        let start = context.loop.nowNanoseconds
        func complete(_ result: Result<JSONObject, ControlError>) {
            finishedObserver = nil
            running = false
            respond(result)
        }
        finishedObserver = {
            finished += 1
            if finished == count, !failed {
                let seconds = Double(self.context.loop.nowNanoseconds - start) / 1e9
                complete(
                    .success([
                        "count": .int(Int64(count)), "bytes": .int(Int64(payload.count)),
                        "seconds": .double(seconds), "transfersPerSecond": .double(Double(count) / seconds),
                    ]))
            }
        }
        func submitBatch() {
            guard !failed else { return }
            let end = min(count, accepted + batch)
            while accepted < end {
                accepted += 1
                context.submit(.transferUserInfo(payload)) { result in
                    switch result {
                    case .failure(let error):
                        if !failed { failed = true; complete(.failure(error.controlError)) }
                    default:
                        break
                    }
                }
            }
            // One batch a loop turn: each turn's transfers commit together.
            if accepted < count { context.loop.execute { submitBatch() } }
        }
        submitBatch()
    }

    static func summary(_ latencies: [UInt64], bytes: Int) -> JSONObject {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1_000
        }
        let mean = Double(sorted.reduce(0, +)) / Double(sorted.count) / 1_000
        return [
            "count": .int(Int64(sorted.count)), "bytes": .int(Int64(bytes)),
            "p50Us": .double(percentile(0.50)), "p99Us": .double(percentile(0.99)),
            "meanUs": .double(mean), "minUs": .double(Double(sorted.first ?? 0) / 1_000),
            "maxUs": .double(Double(sorted.last ?? 0) / 1_000),
        ]
    }
}

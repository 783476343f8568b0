import LinkControl
import LinkJSON
import LinkTrace

/// `trace.get`: the daemon's trace, and live `trace.entry` events for followers.
struct TraceOperations {
    let tracer: Tracer
    let follow: (ControlClientConnection) -> Void

    static let defaultLimit: Int64 = 1_000
    static let maximumLimit: Int64 = 100_000

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "trace.get", summary: "the trace's entries after a number (frames, states, faults, ops); follow: then trace.entry events",
                arguments: [
                    .optional("after", .integer(0...Int64.max), "entries numbered above this (default 0: from the oldest kept)"),
                    .optional("limit", .integer(1...Self.maximumLimit), "at most this many (default 1000)"),
                    .optional("follow", .bool, "then send every new entry as a trace.entry event on this connection"),
                ]
            ) { call in
                let after = UInt64(try call.args.optionalInt("after") ?? 0)
                let limit = Int(try call.args.optionalInt("limit") ?? Self.defaultLimit)
                let entries = tracer.entries(after: after, limit: limit)
                var result: JSONObject = [
                    "entries": .array(entries.map(\.json)),
                    "last": .int(Int64(entries.last?.n ?? max(after, 0))),
                    "recorded": .int(Int64(tracer.lastNumber)),
                    "capacity": .int(Int64(tracer.capacity)),
                ]
                if let oldest = tracer.oldestNumber { result["oldest"] = .int(Int64(oldest)) }
                if try call.args.optionalBool("follow") == true {
                    guard let client = call.client else { throw ControlError.control(.internalError, "trace.get follow needs a connection") }
                    call.succeed(result)
                    follow(client)
                } else {
                    call.succeed(result)
                }
            }
        ]
    }
}

import LinkJSON
import LinkTrace
import XCTest

extension XCTestCase {
    /// An entry as a daemon writes it: `n` of `side`'s run (`device`, `pid`), at time `t`.
    func e(
        _ side: String, _ device: String, pid: Int64 = 1, _ n: UInt64, t: Int64, _ kind: TraceEntry.Kind,
        _ fields: JSONObject = [:]
    ) -> TraceEntry {
        var object: JSONObject = [
            "n": .int(Int64(n)), "t": .int(t), "side": .string(side), "device": .string(device),
            "pid": .int(pid), "kind": .string(kind.rawValue),
        ]
        for (key, value) in fields { object[key] = value }
        return TraceEntry(object)
    }
}

import LinkJSON

/// Reads a daemon's whole trace through `trace.get`, page by page.
public enum TraceReader {
    /// `call` sends `trace.get` with the given arguments and returns its result.
    public static func read(_ call: (JSONObject) throws -> JSONObject) throws -> [TraceEntry] {
        var entries: [TraceEntry] = []
        var after: Int64 = 0
        while true {
            let page = try call(["after": .int(after), "limit": 10_000])
            let batch = (page["entries"]?.arrayValue ?? []).compactMap(TraceEntry.init(json:))
            guard let last = batch.last else { return entries }
            entries += batch
            after = Int64(last.n)
        }
    }
}

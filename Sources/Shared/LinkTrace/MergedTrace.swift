import LinkJSON

/// The traces of several daemons (or of several runs of one daemon) in one order, with each
/// frame sent paired with the same frame received on the other side.
///
/// Entries of one run keep their own order (by `n`); runs interleave by time, which every
/// daemon on one machine takes from the same clock (the system's, or the pair's manual clock),
/// and among entries of the same time a frame received comes after the frame sent.
public struct MergedTrace: Sendable {
    public let entries: [TraceEntry]
    /// For the index of each frame sent, the index of the same frame received, when it arrived.
    public let received: [Int: Int]
    /// For the index of each frame received, the index of the frame sent.
    public let sent: [Int: Int]
    /// Entry indices by run and number, for causes.
    private let byRunAndNumber: [TraceRun: [UInt64: Int]]

    public init(_ traces: [[TraceEntry]]) {
        // Split into runs (a trace file holds every run of its daemon), each in its own order.
        var runs: [TraceRun: [TraceEntry]] = [:]
        var runOrder: [TraceRun] = []
        var seen = Set<String>()
        for trace in traces {
            for entry in trace {
                let key = "\(entry.device)\u{0}\(entry.pid)\u{0}\(entry.n)"
                guard seen.insert(key).inserted else { continue }
                if runs[entry.run] == nil { runOrder.append(entry.run) }
                runs[entry.run, default: []].append(entry)
            }
        }
        var queues = runOrder.map { run in runs[run]!.sorted { $0.n < $1.n } }
        // Each frame's stream and signature: what pairs a frame received with the frame sent.
        var keys = queues.map { $0.map(Self.pairingKey) }
        var heads = Array(repeating: 0, count: queues.count)
        var merged: [TraceEntry] = []
        var mergedKeys: [String?] = []
        merged.reserveCapacity(queues.reduce(0) { $0 + $1.count })
        mergedKeys.reserveCapacity(merged.capacity)
        // Frames sent and merged whose receipt is not merged yet, by key: among entries of the
        // same time (a manual clock's, which stands still between its moves) a frame received
        // comes after the frame sent.
        var inFlight: [String: Int] = [:]
        while true {
            var best = -1
            var tied = false
            for index in queues.indices where heads[index] < queues[index].count {
                if best < 0 || queues[index][heads[index]].time < queues[best][heads[best]].time {
                    best = index
                    tied = false
                } else if queues[index][heads[index]].time == queues[best][heads[best]].time {
                    tied = true
                }
            }
            guard best >= 0 else { break }
            if tied, Self.waitsForItsSender(queues[best][heads[best]], keys[best][heads[best]], inFlight) {
                let time = queues[best][heads[best]].time
                for index in queues.indices where index != best && heads[index] < queues[index].count {
                    let entry = queues[index][heads[index]]
                    if entry.time == time, !Self.waitsForItsSender(entry, keys[index][heads[index]], inFlight) {
                        best = index
                        break
                    }
                }
            }
            let entry = queues[best][heads[best]]
            let key = keys[best][heads[best]]
            if let key {
                if entry.string("dir") == "out" {
                    inFlight[key, default: 0] += 1
                } else if let count = inFlight[key], count > 0 {
                    inFlight[key] = count - 1
                }
            }
            merged.append(entry)
            mergedKeys.append(key)
            heads[best] += 1
        }
        queues.removeAll()
        keys.removeAll()
        entries = merged

        var numbers: [TraceRun: [UInt64: Int]] = [:]
        for (index, entry) in merged.enumerated() { numbers[entry.run, default: [:]][entry.n] = index }
        byRunAndNumber = numbers

        // A frame received is the latest frame of the same signature (type and numbers) sent
        // on that stream and not received yet: a copy sent earlier went out on a link that
        // dropped (or from a process that was killed) and stays unpaired, drawn as lost.
        // Handshake frames name no peer (it is not known yet): they pair with the latest such
        // frame of the other side.
        var waiting: [String: [Int]] = [:]
        var received: [Int: Int] = [:]
        var sent: [Int: Int] = [:]
        for (index, entry) in merged.enumerated() {
            guard let key = mergedKeys[index] else { continue }
            if entry.string("dir") == "out" {
                waiting[key, default: []].append(index)
            } else if let origin = waiting[key]?.popLast() {
                received[origin] = index
                sent[index] = origin
            }
        }
        self.received = received
        self.sent = sent
    }

    /// A frame's stream (from which device to which) and signature; nil for other entries.
    static func pairingKey(_ entry: TraceEntry) -> String? {
        guard entry.kind == .frame else { return nil }
        let outgoing = entry.string("dir") == "out"
        let stream: String
        if let peer = entry.string("peer") {
            stream = outgoing ? "\(entry.device)\u{0}\(peer)" : "\(peer)\u{0}\(entry.device)"
        } else {
            let from = outgoing ? entry.side : (entry.side == "phone" ? "watch" : "phone")
            stream = "handshake\u{0}" + from
        }
        return stream + "\u{0}" + signature(entry)
    }

    /// Whether `entry` is a frame received whose frame sent is not merged yet.
    private static func waitsForItsSender(_ entry: TraceEntry, _ key: String?, _ inFlight: [String: Int]) -> Bool {
        guard let key, entry.string("dir") == "in" else { return false }
        return (inFlight[key] ?? 0) == 0
    }

    /// What identifies a frame on its stream: its type and numbers.
    static func signature(_ entry: TraceEntry) -> String {
        var text = entry.string("type") ?? ""
        for key in ["channel", "seq", "id", "offset"] {
            if let value = entry.int(key) { text += " \(key)=\(value)" }
        }
        return text
    }

    /// The index of the entry that caused the entry at `index`.
    public func causeIndex(of index: Int) -> Int? {
        let entry = entries[index]
        guard let cause = entry.cause else { return nil }
        return byRunAndNumber[entry.run]?[cause]
    }

    /// The lanes of a picture: the phone, then each watch in the order they first appear.
    public var watches: [String] {
        var order: [String] = []
        for entry in entries {
            if entry.side == "watch", !order.contains(entry.device) { order.append(entry.device) }
            if entry.side == "phone", entry.kind == .frame, let peer = entry.string("peer"), !order.contains(peer) { order.append(peer) }
        }
        return order
    }
}

/// Reading trace files: one entry a line, as `--trace-file` writes them.
public enum TraceFile {
    /// The entries of a file's bytes; lines that are not entries (a line cut short by a crash)
    /// are counted, not fatal.
    public static func read(_ bytes: [UInt8]) -> (entries: [TraceEntry], skipped: Int) {
        var entries: [TraceEntry] = []
        var skipped = 0
        for line in bytes.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            if let value = try? JSON.parse(line), let entry = TraceEntry(json: value) {
                entries.append(entry)
            } else {
                skipped += 1
            }
        }
        return (entries, skipped)
    }

    /// One entry as a line of a trace file.
    public static func line(_ entry: TraceEntry) -> [UInt8] {
        var bytes: [UInt8] = []
        JSON.serialize(entry.json, into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}

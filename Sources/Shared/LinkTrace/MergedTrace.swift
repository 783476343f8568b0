import LinkJSON

/// The traces of several daemons (or of several runs of one daemon) in one order, with each
/// frame sent paired with the same frame received on the other side.
///
/// Entries of one run keep their own order (by `n`); runs interleave by time, which every
/// daemon on one machine takes from the same clock.
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
        var heads = Array(repeating: 0, count: queues.count)
        var merged: [TraceEntry] = []
        merged.reserveCapacity(queues.reduce(0) { $0 + $1.count })
        while true {
            var best = -1
            for index in queues.indices where heads[index] < queues[index].count {
                if best < 0 || queues[index][heads[index]].time < queues[best][heads[best]].time { best = index }
            }
            guard best >= 0 else { break }
            merged.append(queues[best][heads[best]])
            heads[best] += 1
        }
        queues.removeAll()
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
        for (index, entry) in merged.enumerated() where entry.kind == .frame {
            let outgoing = entry.string("dir") == "out"
            let stream: String
            if let peer = entry.string("peer") {
                stream = outgoing ? "\(entry.device)\u{0}\(peer)" : "\(peer)\u{0}\(entry.device)"
            } else {
                let from = outgoing ? entry.side : (entry.side == "phone" ? "watch" : "phone")
                stream = "handshake\u{0}" + from
            }
            let key = stream + "\u{0}" + Self.signature(entry)
            if outgoing {
                waiting[key, default: []].append(index)
            } else if let origin = waiting[key]?.popLast() {
                received[origin] = index
                sent[index] = origin
            }
        }
        self.received = received
        self.sent = sent
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

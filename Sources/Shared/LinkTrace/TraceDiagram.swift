import LinkJSON

/// A merged trace as a sequence diagram: lanes (the phone, the link, each watch) and steps
/// (arrows for frames, notes for states, ops and faults, and runs of alike steps summarised
/// as one). The Mermaid and HTML pictures draw this one model.
public struct TraceDiagram: Sendable {
    public enum Lane: Hashable, Sendable {
        case phone
        case link
        case watch(String)
    }

    public struct Step: Sendable {
        public enum Shape: Sendable {
            /// A frame from one lane to another; `lost` when it never arrived (it ends on the link).
            case arrow(from: Lane, to: Lane, lost: Bool)
            /// A note over one lane, or spanning two.
            case note(Lane, Lane?)
            /// `count` alike steps, summarised; they span these lanes.
            case run(Lane, Lane, count: Int)
        }

        public var shape: Shape
        public var label: String
        public var category: String
        /// Drawn to stand out: link drops, kills, errors.
        public var isAlarm: Bool
        public var time: Int64
        public var endTime: Int64
        /// The entry drawn (the first of a run), an index into the merged trace.
        public var entry: Int
        /// For an arrow: the entry where it arrived.
        public var arrival: Int?
        public var details: String
        /// What makes steps alike, for summarising runs.
        var key: String
    }

    public struct Options: Sendable {
        /// Draw HELLO, AUTH and READY (else only the link going up).
        public var showsHandshake = true
        /// Runs of at least this many alike steps become one step; 0 never summarises.
        public var runThreshold = 8
        public init(showsHandshake: Bool = true, runThreshold: Int = 8) {
            self.showsHandshake = showsHandshake
            self.runThreshold = runThreshold
        }
    }

    public let lanes: [Lane]
    public let steps: [Step]
    public let trace: MergedTrace

    public init(_ trace: MergedTrace, options: Options = Options()) {
        self.trace = trace
        let entries = trace.entries
        lanes = [.phone, .link] + trace.watches.map { Lane.watch($0) }

        func lane(side: String, device: String) -> Lane { side == "phone" ? .phone : .watch(device) }
        func peerLane(of entry: TraceEntry) -> Lane? {
            guard let peer = entry.string("peer") else { return nil }
            return entry.side == "phone" ? .watch(peer) : .phone
        }

        var steps: [Step] = []
        var runsEnded = Set<TraceRun>()
        var lastRun: [String: TraceRun] = [:]
        for (index, entry) in entries.enumerated() {
            let own = lane(side: entry.side, device: entry.device)
            let category = TraceText.category(entry)
            var step = Step(
                shape: .note(own, nil), label: TraceText.label(entry), category: category,
                isAlarm: TraceText.isAlarm(entry), time: entry.time, endTime: entry.time, entry: index,
                arrival: nil, details: "", key: "")
            switch entry.kind {
            case .frame:
                if category == "handshake", !options.showsHandshake { continue }
                if entry.string("dir") == "out" {
                    if let arrival = trace.received[index] {
                        let target = entries[arrival]
                        step.shape = .arrow(from: own, to: lane(side: target.side, device: target.device), lost: false)
                        step.arrival = arrival
                        step.endTime = target.time
                    } else {
                        step.shape = .arrow(from: own, to: .link, lost: true)
                        step.label += " (lost)"
                        step.isAlarm = true
                    }
                } else {
                    guard trace.sent[index] == nil else { continue }
                    // The sender's trace is missing: drawn from the sender's lane all the same.
                    step.shape = .arrow(from: peerLane(of: entry) ?? .link, to: own, lost: false)
                }
            case .link:
                step.shape = .note(own, .link)
            case .daemon:
                if entry.string("name") == "stop" {
                    runsEnded.insert(entry.run)
                } else if let previous = lastRun[entry.device], !runsEnded.contains(previous) {
                    step.label += " after pid \(previous.pid) ended without stopping (killed)"
                    step.isAlarm = true
                }
                lastRun[entry.device] = entry.run
            default:
                break
            }
            step.key = Self.key(of: step, entry)
            steps.append(step)
        }
        var drawn = options.runThreshold > 0 ? Self.summariseRuns(steps, threshold: options.runThreshold, entries: entries) : steps
        // Details only for what is drawn on its own: a run has its summary already.
        for index in drawn.indices where drawn[index].details.isEmpty {
            var details = TraceText.details(entries[drawn[index].entry])
            if let arrival = drawn[index].arrival {
                details += "\narrived: " + TraceText.clock(entries[arrival].time)
            } else if case .arrow(_, _, true) = drawn[index].shape {
                details += "\nnever arrived"
            }
            drawn[index].details = details
        }
        self.steps = drawn
    }

    private static func key(of step: Step, _ entry: TraceEntry) -> String {
        var key = step.isAlarm ? "!" : ""
        switch step.shape {
        case .arrow(let from, let to, let lost): key += "a\(from)\(to)\(lost)"
        case .note(let a, let b): key += "n\(a)\(String(describing: b))"
        case .run: key += "r"
        }
        key += entry.kind.rawValue + (entry.string("type") ?? entry.string("name") ?? entry.string("op") ?? "")
        if let channel = entry.int("channel") { key += "\(channel)" }
        return key
    }

    /// Replaces each run of at least `threshold` alike steps (the same steps repeating with a
    /// period of 1 to 3: chunks, message and reply, item and ack and progress) by one step.
    private static func summariseRuns(_ steps: [Step], threshold: Int, entries: [TraceEntry]) -> [Step] {
        var result: [Step] = []
        var index = 0
        while index < steps.count {
            var best = (length: 1, period: 1)
            for period in 1...3 where index + period < steps.count {
                var end = index + period
                while end < steps.count, steps[end].key == steps[end - period].key { end += 1 }
                let length = end - index
                if length > best.length, length >= 2 * period { best = (length, period) }
            }
            guard best.length >= threshold else {
                result.append(steps[index])
                index += 1
                continue
            }
            let run = steps[index..<(index + best.length)]
            var counts: [(String, Int)] = []
            var lanesTouched: [Lane] = []
            var progress: String?
            for step in run {
                let entry = entries[step.entry]
                var name = entry.kind == .frame ? (entry.string("type") ?? "?") : (entry.string("name") ?? entry.string("op") ?? entry.kind.rawValue)
                if case .arrow(let from, let to, _) = step.shape {
                    name += " " + laneName(from) + "→" + laneName(to)
                    lanesTouched += [from, to]
                } else if case .note(let a, let b) = step.shape {
                    lanesTouched.append(a)
                    if let b { lanesTouched.append(b) }
                }
                if let position = counts.firstIndex(where: { $0.0 == name }) { counts[position].1 += 1 } else { counts.append((name, 1)) }
                if entry.string("name") == "file.progress" { progress = TraceText.label(entry) }
            }
            let order: [Lane] = [.phone, .link] + lanesTouched.compactMap { if case .watch = $0 { return $0 } else { return nil } }
            let present = order.filter { lanesTouched.contains($0) }
            let first = run.first!, last = run.last!
            let label =
                "×\(best.length)" + (progress.map { " (\($0))" } ?? "") + ": "
                + counts.map { "\($0.0) ×\($0.1)" }.joined(separator: ", ")
            let firstEntry = entries[first.entry], lastEntry = entries[last.entry]
            var details = "\(best.length) alike steps from \(TraceText.clock(first.time)) to \(TraceText.clock(last.endTime))\n"
            details += "first: " + TraceText.label(firstEntry) + "\nlast: " + TraceText.label(lastEntry)
            result.append(
                Step(
                    shape: .run(present.first ?? .phone, present.last ?? .phone, count: best.length), label: label,
                    category: first.category, isAlarm: run.contains { $0.isAlarm }, time: first.time,
                    endTime: max(last.endTime, last.time), entry: first.entry, arrival: nil, details: details, key: "run"))
            index += best.length
        }
        return result
    }

    /// A lane as people read it: `phone`, `link`, or the watch's device id.
    public static func laneName(_ lane: Lane) -> String {
        switch lane {
        case .phone: return "phone"
        case .link: return "link"
        case .watch(let id): return id
        }
    }
}

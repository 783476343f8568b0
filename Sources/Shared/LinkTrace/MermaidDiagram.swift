/// A merged trace as a Mermaid `sequenceDiagram`, for a pull request or an issue.
///
/// Lanes are participants (`phone`, `wire`, `w1`, `w2`, ...: ids Mermaid accepts, named by
/// `link` and the watch's device id); frames are arrows (solid from the phone, dashed from a watch, a
/// cross when the frame never arrived); states, ops and faults are notes (faults marked ⚠);
/// runs of alike steps are one note. Text is cleaned of what Mermaid would read as syntax
/// (`;`, `#`, `%%`, `<`, `>`, line breaks).
public enum MermaidDiagram {
    public static func render(_ diagram: TraceDiagram) -> String {
        // `link` is a keyword of Mermaid's sequence diagrams: the link's lane is `wire`.
        var ids: [TraceDiagram.Lane: String] = [.phone: "phone", .link: "wire"]
        var lines = ["sequenceDiagram"]
        var watchNumber = 0
        for lane in diagram.lanes {
            switch lane {
            case .phone: lines.append("    participant phone as phone")
            case .link: lines.append("    participant wire as link")
            case .watch(let id):
                watchNumber += 1
                ids[lane] = "w\(watchNumber)"
                lines.append("    participant w\(watchNumber) as \(clean(id))")
            }
        }
        for step in diagram.steps {
            let time = TraceText.clock(step.time).prefix(12)
            let text = clean((step.isAlarm ? "⚠ " : "") + step.label)
            switch step.shape {
            case .arrow(let from, let to, let lost):
                let arrow = lost ? "-x" : (from == .phone ? "->>" : "-->>")
                lines.append("    \(ids[from]!)\(arrow)\(ids[to]!): \(time) \(text)")
            case .note(let a, let b):
                let over = b.map { "\(ids[a]!),\(ids[$0]!)" } ?? ids[a]!
                lines.append("    Note over \(over): \(time) \(text)")
            case .run(let a, let b, _):
                let over = a == b ? ids[a]! : "\(ids[a]!),\(ids[b]!)"
                lines.append("    Note over \(over): \(time) \(text)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func clean(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case ";": result.append(",")
            case "#": result.append("no.")
            case "<": result.append("‹")
            case ">": result.append("›")
            case "\n", "\r", "\t": result.append(" ")
            case "%": result.append(result.hasSuffix("%") ? " " : "%")
            default: result.append(character)
            }
        }
        return result.count > 120 ? String(result.prefix(119)) + "…" : result
    }
}

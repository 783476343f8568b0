import LinkControl
import LinkJSON

/// A daemon's op table (`ops.list`) as text for people.
enum OpsHelp {
    static func text(_ listing: JSONObject) -> String {
        let role = listing["role"]?.stringValue ?? "?"
        let ops = (listing["ops"]?.arrayValue ?? []).compactMap(\.objectValue)
        let width = min(32, ops.map { ($0["name"]?.stringValue ?? "").count }.max() ?? 0)
        var lines = ["Ops of the \(role) (linkctl \(role) OP [--json '{...}']):", ""]
        for op in ops {
            let name = op["name"]?.stringValue ?? ""
            let padding = String(repeating: " ", count: max(1, width + 2 - name.count))
            lines.append("  \(name)\(padding)\(op["summary"]?.stringValue ?? "")")
            let arguments = (op["arguments"]?.arrayValue ?? []).compactMap(\.objectValue).map { argument in
                var text = "\(argument["name"]?.stringValue ?? "") (\(argument["type"]?.stringValue ?? "")"
                text += argument["required"] == true ? ", required)" : ")"
                if let summary = argument["summary"]?.stringValue { text += ": \(summary)" }
                return text
            }
            if !arguments.isEmpty {
                lines.append(String(repeating: " ", count: width + 4) + arguments.joined(separator: "; "))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

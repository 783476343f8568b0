/// The live view of `linkctl trace --follow`: one line an entry, the time, then the phone's
/// column on the left and the watches' on the right. A frame reads `→ MESSAGE id=1 ...` where
/// it was sent and `← MESSAGE id=1` where it arrived; what stands out is marked `!!`. Once a
/// second watch appears, each watch's entry starts with its device id.
public struct TraceColumns: Sendable {
    public let width: Int
    private var watches: [String] = []

    public init(width: Int = 100) {
        self.width = max(60, width)
    }

    /// The header line and the rule under it.
    public var header: String {
        let column = (width - 18) / 2
        return pad("time", 16) + "  " + pad("phone", column) + "│ watch\n" + String(repeating: "─", count: 16 + 2 + column) + "┼"
            + String(repeating: "─", count: column) + "\n"
    }

    /// One entry as a line.
    public mutating func line(_ entry: TraceEntry) -> String {
        if entry.side == "watch", !watches.contains(entry.device) { watches.append(entry.device) }
        let column = (width - 18) / 2
        var text = TraceText.label(entry)
        if entry.kind == .frame { text = (entry.string("dir") == "out" ? "→ " : "← ") + text }
        if TraceText.isAlarm(entry) { text = "!! " + text }
        if entry.side == "watch", watches.count > 1 { text = "[\(entry.device)] " + text }
        let cell = text.count > column - 1 ? String(text.prefix(column - 2)) + "…" : text
        let time = String(TraceText.clock(entry.time).prefix(15))
        if entry.side == "phone" {
            return pad(time, 16) + "  " + pad(cell, column) + "│\n"
        }
        return pad(time, 16) + "  " + String(repeating: " ", count: column) + "│ " + cell + "\n"
    }

    private func pad(_ text: String, _ count: Int) -> String {
        text.count >= count ? text : text + String(repeating: " ", count: count - text.count)
    }
}

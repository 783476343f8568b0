import LinkControl
import WireProtocol

/// A short, secret-free preview of a payload for the trace: a dictionary's keys and short
/// values, Data only by its size.
enum TracePreview {
    static let maximumLength = 80

    static func text(_ bytes: [UInt8], isData: Bool) -> String {
        if isData { return "<\(bytes.count) bytes>" }
        guard !bytes.isEmpty else { return "{…}" }
        guard let dictionary = try? PropertyListCodec.decodeDictionary(bytes) else { return "<\(bytes.count) bytes>" }
        return clip(render(.dictionary(dictionary), depth: 0))
    }

    static func clip(_ text: String) -> String {
        text.count <= maximumLength ? text : String(text.prefix(maximumLength - 1)) + "…"
    }

    private static func render(_ value: PropertyListValue, depth: Int) -> String {
        switch value {
        case .dictionary(let members):
            guard depth < 2 else { return "{…}" }
            let inner = members.keys.sorted().map { "\($0): \(render(members[$0]!, depth: depth + 1))" }
            return "{" + inner.joined(separator: ", ") + "}"
        case .array(let items):
            guard depth < 2 else { return "[…]" }
            return "[" + items.prefix(4).map { render($0, depth: depth + 1) }.joined(separator: ", ") + (items.count > 4 ? ", …" : "") + "]"
        case .data(let bytes):
            return "<\(bytes.count) bytes>"
        case .string(let text):
            return "\"" + (text.count > 24 ? String(text.prefix(23)) + "…" : text) + "\""
        default:
            return "\(PlistJSON.json(from: value))"
        }
    }
}

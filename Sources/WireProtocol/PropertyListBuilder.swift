#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A property list told value by value in document order, kept flat: a container's values
/// between its begin and its ``end()``, each dictionary value after its key. Strings and data
/// are kept as bytes in one buffer, so a list read from other text (JSON) reaches the
/// encoding without a `String` or a ``PropertyListValue`` between.
/// ``PropertyListCodec/encode(_:)-(PropertyListBuilder)`` writes it.
public struct PropertyListBuilder {
    enum Kind: UInt8 {
        case string, data, integer, real, date, boolean, array, dictionary
    }

    struct Node {
        var kind: Kind
        /// For a string: whether its bytes are all ASCII.
        var isASCII = true
        /// For a string or data: where its bytes start in ``storage``. For a container: the
        /// index of the node after its last value.
        var start = 0
        /// For a string or data: its byte count. For a container: the number of nodes directly
        /// inside (keys included).
        var count = 0
        /// An integer's, real's or date's bits; a boolean's 0 or 1.
        var bits: UInt64 = 0
    }

    private(set) var nodes: [Node] = []
    private(set) var storage: [UInt8] = []
    private var open: [Int] = []

    /// An empty list, with room for about `nodes` values and `bytes` bytes of strings and data.
    public init(nodes: Int = 0, bytes: Int = 0) {
        self.nodes.reserveCapacity(nodes)
        storage.reserveCapacity(bytes)
    }

    public mutating func beginDictionary() {
        add(Node(kind: .dictionary))
        open.append(nodes.count - 1)
    }

    public mutating func beginArray() {
        add(Node(kind: .array))
        open.append(nodes.count - 1)
    }

    /// Ends the innermost dictionary or array.
    public mutating func end() {
        let container = open.removeLast()
        var count = 0
        var child = container + 1
        while child < nodes.count {
            count += 1
            child = next(after: child)
        }
        nodes[container].start = nodes.count
        nodes[container].count = count
    }

    /// A string (a key, inside a dictionary) of valid UTF-8 bytes; whether they are all ASCII.
    @discardableResult
    public mutating func string(utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let isASCII = ASCII.firstNonASCII(UnsafeRawBufferPointer(utf8)) == nil
        add(Node(kind: .string, isASCII: isASCII, start: storage.count, count: utf8.count))
        storage.append(contentsOf: utf8)
        return isASCII
    }

    /// A string (a key, inside a dictionary).
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { _ = string(utf8: $0) }
    }

    public mutating func integer(_ value: Int64) {
        add(Node(kind: .integer, bits: UInt64(bitPattern: value)))
    }

    public mutating func real(_ value: Double) {
        add(Node(kind: .real, bits: value.bitPattern))
    }

    public mutating func boolean(_ value: Bool) {
        add(Node(kind: .boolean, bits: value ? 1 : 0))
    }

    public mutating func date(_ value: Date) {
        add(Node(kind: .date, bits: value.timeIntervalSinceReferenceDate.bitPattern))
    }

    public mutating func data(_ bytes: UnsafeBufferPointer<UInt8>) {
        add(Node(kind: .data, start: storage.count, count: bytes.count))
        storage.append(contentsOf: bytes)
    }

    /// `value`, containers and all.
    public mutating func value(_ value: PropertyListValue) {
        switch value {
        case .string(let string): self.string(string)
        case .integer(let integer): self.integer(integer)
        case .real(let real): self.real(real)
        case .boolean(let boolean): self.boolean(boolean)
        case .date(let date): self.date(date)
        case .data(let bytes): bytes.withUnsafeBufferPointer { data($0) }
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            end()
        case .dictionary(let dictionary):
            beginDictionary()
            for (key, member) in dictionary {
                string(key)
                self.value(member)
            }
            end()
        }
    }

    /// The index of the node after node `index` and all it contains (an ended container).
    func next(after index: Int) -> Int {
        nodes.withUnsafeBufferPointer { Self.next(after: index, in: $0) }
    }

    static func next(after index: Int, in nodes: UnsafeBufferPointer<Node>) -> Int {
        switch nodes[index].kind {
        case .array, .dictionary: return nodes[index].start
        default: return index + 1
        }
    }

    private mutating func add(_ node: Node) {
        nodes.append(node)
    }
}

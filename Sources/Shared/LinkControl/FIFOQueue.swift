/// A first-in, first-out queue over an array with a head index: `popFirst` is O(1) and the
/// storage is reused once the queue runs empty.
public struct FIFOQueue<Element> {
    private var storage: [Element] = []
    private var head = 0

    public init() {}

    public var isEmpty: Bool { head == storage.count }
    public var count: Int { storage.count - head }
    /// The oldest element.
    public var first: Element? { isEmpty ? nil : storage[head] }
    /// The newest element.
    public var last: Element? { isEmpty ? nil : storage[storage.count - 1] }

    public mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Removes and returns the oldest element.
    public mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        }
        return element
    }
}

extension FIFOQueue: Sendable where Element: Sendable {}

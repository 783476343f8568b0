/// A FIFO that keeps the newest elements within a count and a byte budget.
///
/// An element is released as soon as it falls out of the budget; the slots it leaves are
/// reclaimed in bulk, so an append costs O(1) amortised.
struct RingBuffer<Element> {
    private var storage: [(element: Element?, weight: Int)] = []
    private var head = 0
    private(set) var totalWeight = 0
    let capacity: Int
    let weightCapacity: Int

    init(capacity: Int, weightCapacity: Int = .max) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.weightCapacity = weightCapacity
    }

    var count: Int { storage.count - head }

    mutating func append(_ element: Element, weight: Int = 0) {
        storage.append((element, weight))
        totalWeight += weight
        while count > 1, count > capacity || totalWeight > weightCapacity {
            totalWeight -= storage[head].weight
            storage[head] = (nil, 0)
            head += 1
        }
        if head > 64, head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    /// Oldest first.
    var elements: [Element] {
        storage[head...].map { $0.element! }
    }
}

/// A FIFO that keeps the newest elements within a count and a byte budget.
///
/// The elements sit in a circle of slots that grows (doubling) up to `capacity`: an append
/// writes one slot and an eviction empties one, releasing its element at once, with nothing
/// moved (a list of received messages appends and evicts one at a time).
struct RingBuffer<Element> {
    private var slots: [(element: Element?, weight: Int)] = []
    /// The slot of the oldest element.
    private var head = 0
    private(set) var count = 0
    private(set) var totalWeight = 0
    let capacity: Int
    let weightCapacity: Int

    init(capacity: Int, weightCapacity: Int = .max) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.weightCapacity = weightCapacity
    }

    mutating func append(_ element: Element, weight: Int = 0) {
        if count == capacity {
            removeOldest()
        } else if count == slots.count {
            grow()
        }
        slots[slot(count)] = (element, weight)
        count += 1
        totalWeight += weight
        while count > 1, totalWeight > weightCapacity {
            removeOldest()
        }
    }

    /// Oldest first.
    var elements: [Element] {
        (0..<count).map { slots[slot($0)].element! }
    }

    /// The slot of the element `offset` places after the oldest.
    @inline(__always)
    private func slot(_ offset: Int) -> Int {
        let index = head + offset
        return index < slots.count ? index : index - slots.count
    }

    private mutating func removeOldest() {
        totalWeight -= slots[head].weight
        slots[head] = (nil, 0)
        head = slot(1)
        count -= 1
    }

    /// Room for more, the elements laid out from slot 0 again.
    private mutating func grow() {
        let size = min(capacity, max(16, 2 * slots.count))
        var grown: [(element: Element?, weight: Int)] = []
        grown.reserveCapacity(size)
        for offset in 0..<count { grown.append(slots[slot(offset)]) }
        grown.append(contentsOf: repeatElement((element: Element?.none, weight: 0), count: size - count))
        slots = grown
        head = 0
    }
}

import LinkCollections

/// A binary min-heap of timers keyed by deadline, first-in first-out among equal deadlines.
///
/// The heap holds deadlines and sequence numbers; the bodies live in a table, so cancelling
/// releases a body (and what it captured) at once. The heap entry of a cancelled timer stays
/// until it reaches the top or the heap is compacted, once cancelled entries outnumber live ones.
struct TimerHeap {
    struct Entry {
        var deadline: UInt64
        var sequence: UInt64

        @inline(__always)
        func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
        }
    }

    private var entries: [Entry] = []
    private var bodies = SequenceMap<() -> Void>()
    private var cancelledInHeap = 0

    /// The sequence number the next scheduled timer gets; sequence numbers only grow.
    private(set) var nextSequence: UInt64 = 1

    /// A bit of a timer's sequence number that its owner may set (``reserveSequence(flags:)``):
    /// the loop marks its real-time timers with it. Sequence order ignores it.
    static let flag: UInt64 = 1 << 62

    /// The number of timers scheduled and neither fired nor cancelled.
    var count: Int { bodies.count }

    var isEmpty: Bool { bodies.isEmpty }

    mutating func schedule(deadline: UInt64, _ body: @escaping () -> Void) -> UInt64 {
        let sequence = nextSequence
        nextSequence += 1
        bodies[sequence] = body
        entries.append(Entry(deadline: deadline, sequence: sequence))
        siftUp(entries.count - 1)
        return sequence
    }

    /// A sequence number for ``insert(deadline:sequence:_:)``, here or in another heap: the
    /// heaps of one loop share this one's numbers, so that a timer keeps its number when it
    /// moves between them.
    mutating func reserveSequence(flags: UInt64 = 0) -> UInt64 {
        let sequence = nextSequence
        nextSequence += 1
        return sequence | flags
    }

    /// Adds a timer with a number from ``reserveSequence(flags:)`` (of this heap or another).
    mutating func insert(deadline: UInt64, sequence: UInt64, _ body: @escaping () -> Void) {
        bodies[sequence] = body
        entries.append(Entry(deadline: deadline, sequence: sequence))
        siftUp(entries.count - 1)
    }

    /// Removes the live timers whose sequence numbers `predicate` picks and returns them in
    /// deadline order: to move them to another heap.
    mutating func removeAll(where predicate: (UInt64) -> Bool) -> [(deadline: UInt64, sequence: UInt64, body: () -> Void)] {
        var taken: [(deadline: UInt64, sequence: UInt64, body: () -> Void)] = []
        for entry in entries where predicate(entry.sequence) {
            guard let body = bodies.removeValue(forKey: entry.sequence) else { continue }
            taken.append((entry.deadline, entry.sequence, body))
        }
        guard !taken.isEmpty else { return [] }
        compact()
        taken.sort { $0.deadline < $1.deadline || ($0.deadline == $1.deadline && $0.sequence < $1.sequence) }
        return taken
    }

    /// Cancels a pending timer; returns `false` if it already fired or was cancelled.
    @discardableResult
    mutating func cancel(_ sequence: UInt64) -> Bool {
        guard bodies.removeValue(forKey: sequence) != nil else { return false }
        cancelledInHeap += 1
        if cancelledInHeap > 64 && cancelledInHeap * 2 > entries.count {
            compact()
        }
        return true
    }

    /// The deadline of the earliest live timer.
    mutating func nearestDeadline() -> UInt64? {
        dropCancelledAtTop()
        return entries.first?.deadline
    }

    /// Removes and returns the earliest live timer if its deadline is at or before `now` and
    /// it was scheduled before `sequenceLimit`.
    mutating func popExpired(now: UInt64, sequenceLimit: UInt64) -> (() -> Void)? {
        dropCancelledAtTop()
        guard let top = entries.first, top.deadline <= now, top.sequence & ~Self.flag < sequenceLimit else {
            return nil
        }
        _ = popTop()
        return bodies.removeValue(forKey: top.sequence)
    }

    private mutating func dropCancelledAtTop() {
        // With none cancelled in the heap the top is live: no look at the table, twice a turn.
        guard cancelledInHeap > 0 else { return }
        while let top = entries.first, !bodies.contains(top.sequence) {
            _ = popTop()
            cancelledInHeap -= 1
        }
    }

    private mutating func popTop() -> Entry {
        let last = entries.removeLast()
        guard !entries.isEmpty else { return last }
        let top = entries[0]
        entries[0] = last
        siftDown(0)
        return top
    }

    private mutating func compact() {
        entries.removeAll { !bodies.contains($0.sequence) }
        cancelledInHeap = 0
        var index = entries.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let count = entries.count
        while true {
            let left = 2 * parent + 1
            if left >= count { return }
            var smallest = left
            let right = left + 1
            if right < count && entries[right].precedes(entries[left]) {
                smallest = right
            }
            guard entries[smallest].precedes(entries[parent]) else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

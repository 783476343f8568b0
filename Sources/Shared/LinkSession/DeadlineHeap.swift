/// The reply deadlines of pending messages: one min-heap and one runtime timer for all of
/// them, instead of a timer per message. Entries of messages that completed stay until they
/// reach the top or the heap is compacted. (The simulator orders its events with it too.)
package struct DeadlineHeap {
    private(set) var entries: [(deadline: Int64, id: UInt64)] = []

    package init() {}

    var count: Int { entries.count }
    var top: (deadline: Int64, id: UInt64)? { entries.first }

    package mutating func push(deadline: Int64, id: UInt64) {
        entries.append((deadline, id))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    package mutating func pop() -> (deadline: Int64, id: UInt64)? {
        guard !entries.isEmpty else { return nil }
        let top = entries[0]
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(0)
        }
        return top
    }

    /// Keeps only the entries `isLive` accepts.
    mutating func compact(_ isLive: (UInt64) -> Bool) {
        entries.removeAll { !isLive($0.id) }
        var index = entries.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    mutating func removeAll() { entries.removeAll(keepingCapacity: true) }

    private func precedes(_ a: Int, _ b: Int) -> Bool {
        entries[a].deadline < entries[b].deadline || (entries[a].deadline == entries[b].deadline && entries[a].id < entries[b].id)
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            var smallest = left
            if left + 1 < entries.count, precedes(left + 1, left) { smallest = left + 1 }
            guard precedes(smallest, parent) else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

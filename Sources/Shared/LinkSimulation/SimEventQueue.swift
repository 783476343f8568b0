/// A min-heap of events by virtual time; events of one time leave in the order they came.
struct SimEventQueue<Event> {
    private var heap: [(time: Int64, order: UInt64, event: Event)] = []
    private var nextOrder: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    mutating func push(_ event: Event, at time: Int64) {
        heap.append((time, nextOrder, event))
        nextOrder += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (time: Int64, event: Event)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && less(left, smallest) { smallest = left }
            if right < heap.count && less(right, smallest) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return (top.time, top.event)
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        heap[a].time != heap[b].time ? heap[a].time < heap[b].time : heap[a].order < heap[b].order
    }
}

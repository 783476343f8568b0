import LinkSession

/// The world's events by virtual time; events of one time leave in the order they came. The
/// order is the session's own deadline heap (``DeadlineHeap``: by time, then by number), the
/// events wait in a table under their number.
struct SimEventQueue<Event> {
    private var order = DeadlineHeap()
    private var events: [UInt64: Event] = [:]
    private var nextNumber: UInt64 = 0

    mutating func push(_ event: Event, at time: Int64) {
        events[nextNumber] = event
        order.push(deadline: time, id: nextNumber)
        nextNumber += 1
    }

    mutating func pop() -> (time: Int64, event: Event)? {
        guard let (time, number) = order.pop(), let event = events.removeValue(forKey: number) else { return nil }
        return (time, event)
    }
}

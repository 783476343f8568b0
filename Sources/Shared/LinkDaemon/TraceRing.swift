/// Where the trace keeps its newest entries: ``capacity`` slots (the oldest written over once
/// full), the ``Tracer/Detail`` of those that have one, and a ring of bytes for the texts slots
/// refer to (a small dictionary's preview, a note's transfer id). Its arrays are reserved at
/// the first entry and text, so a daemon whose trace stays empty pays no memory for them.
struct TraceRing {
    let capacity: Int
    let textsCapacity: Int
    /// The slots in the order written; once full, the oldest is at ``start``.
    private var slots: [Tracer.Slot] = []
    private var start = 0
    /// The details of the entries held that have one, oldest first: entry numbers only
    /// grow, so a new one is appended and the one the ring drops is the first.
    private var details: [(number: UInt64, detail: Tracer.Detail?)] = []
    private var detailsStart = 0
    /// The bytes of texts, one after another, the oldest overwritten once ``textsCapacity``
    /// are written; a slot's text is there while fewer bytes have been written after it.
    private var texts: [UInt8] = []
    private var textsWritten: UInt64 = 0

    init(capacity: Int, textsCapacity: Int) {
        self.capacity = capacity
        self.textsCapacity = textsCapacity
    }

    /// How many entries it holds (the newest ones).
    var count: Int { slots.count }

    /// How many details it holds: at most one for each entry.
    var detailCount: Int { details.count - detailsStart }

    /// Keeps `slot`, entry `number` (the newest), over the oldest once full.
    @inline(__always)
    mutating func store(_ slot: Tracer.Slot, number: UInt64, detail: Tracer.Detail?) {
        if slots.count < capacity {
            if slots.isEmpty { slots.reserveCapacity(capacity) }
            slots.append(slot)
        } else {
            // Whether the entry written over has a detail is asked of the details (the oldest
            // kept is the first), not of its slot: the slot was written a whole ring ago, and
            // reading it back waited on memory at every entry.
            let dropped = number - UInt64(capacity)
            if detailsStart < details.count, details[detailsStart].number == dropped { dropOldestDetail() }
            slots[start] = slot
            start = start + 1 == capacity ? 0 : start + 1
        }
        if let detail { details.append((number, detail)) }
    }

    /// The slot `index` places after the oldest held.
    func slot(_ index: Int) -> Tracer.Slot {
        slots[(start + index) % slots.count]
    }

    /// The detail of entry `number` (one the ring holds), by binary search.
    func detail(of number: UInt64) -> Tracer.Detail? {
        var low = detailsStart, high = details.count
        while low < high {
            let middle = (low + high) / 2
            if details[middle].number < number { low = middle + 1 } else { high = middle }
        }
        return low < details.count && details[low].number == number ? details[low].detail : nil
    }

    /// Forgets the detail of the entry dropped (the oldest with one).
    private mutating func dropOldestDetail() {
        details[detailsStart].detail = nil
        detailsStart += 1
        if detailsStart > 64 && detailsStart * 2 > details.count {
            details.removeFirst(detailsStart)
            detailsStart = 0
        }
    }

    /// Copies `bytes` into the texts for `slot`; a text longer than the ring (or than a slot
    /// can count) is not kept.
    mutating func writeText(_ bytes: UnsafeBufferPointer<UInt8>, into slot: inout Tracer.Slot) {
        guard bytes.count <= min(textsCapacity, Int(UInt16.max)) else { return }
        if texts.isEmpty { texts = [UInt8](repeating: 0, count: textsCapacity) }
        slot.wide = textsWritten
        slot.textLength = UInt16(bytes.count)
        slot.bits.insert(.hasText)
        let at = Int(textsWritten % UInt64(textsCapacity))
        let first = min(bytes.count, textsCapacity - at)
        // Copied with memcpy (`update(from:count:)`): `replaceSubrange` costs about 70
        // instructions for a 132-byte preview, as much as the rest of this function.
        if let source = bytes.baseAddress {
            texts.withUnsafeMutableBufferPointer { texts in
                let base = texts.baseAddress.unsafelyUnwrapped
                (base + at).update(from: source, count: first)
                if first < bytes.count { base.update(from: source + first, count: bytes.count - first) }
            }
        }
        textsWritten += UInt64(bytes.count)
    }

    /// A slot's text, if it has not been written over since.
    func text(of slot: Tracer.Slot) -> [UInt8]? {
        guard slot.bits.contains(.hasText), !texts.isEmpty, textsWritten - slot.wide <= UInt64(textsCapacity) else { return nil }
        let start = Int(slot.wide % UInt64(textsCapacity))
        return (0..<Int(slot.textLength)).map { texts[(start + $0) % textsCapacity] }
    }
}

extension Array {
    /// Removes every element and keeps the storage, taking them one at a time from the end:
    /// for the short lists a loop turn empties every time (a channel or two to flush, a
    /// couple of events or actions), cheaper than `removeAll(keepingCapacity: true)`, which
    /// replaces the whole range (about 200 instructions for a list of one or two). Linear in
    /// the count, as any removal of elements that must be released.
    @inlinable
    public mutating func removeAllKeepingStorage() {
        while popLast() != nil {}
    }
}

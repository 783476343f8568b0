/// A map from the sequence numbers a program hands out itself (request tokens, message ids,
/// timer sequences) to values: open addressing with linear probing, Fibonacci hashing,
/// deletion by backward shift (no tombstones).
///
/// `Dictionary` hashes every key with SipHash and a per-instance seed, which keeps keys an
/// outsider chooses from colliding on purpose; for keys the program counts up itself that
/// costs about a hundred instructions a lookup, several times per message on the daemons' hot
/// paths. Here a lookup is one multiplication and, at a load of at most a half, about one
/// probe of an array of plain keys. Keys an outsider picks may be looked up (a reply names the
/// id it answers); only keys the program made should be inserted.
///
/// Keys are below `UInt64.max` (the map stores `key + 1`, 0 marking a free slot); looking up
/// `UInt64.max` finds nothing. Iteration order is unspecified, as with `Dictionary`.
public struct SequenceMap<Value> {
    /// `key + 1` of the slot's member, 0 for a free slot.
    @usableFromInline var keys: [UInt64]
    @usableFromInline var values: [Value?]
    /// `64 - log2(keys.count)`: the top bits of the product pick the slot.
    @usableFromInline var shift: UInt64
    @usableFromInline var storedCount = 0

    /// An empty map; the first insertion allocates.
    @inlinable
    public init() {
        keys = []
        values = []
        shift = 64
    }

    /// The number of keys with a value.
    @inlinable
    public var count: Int { storedCount }

    @inlinable
    public var isEmpty: Bool { storedCount == 0 }

    @inlinable
    public subscript(key: UInt64) -> Value? {
        get {
            guard let index = find(key) else { return nil }
            return values[index]
        }
        set {
            if let newValue {
                insert(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Whether `key` has a value: without copying the value out (a closure's or an object's
    /// copy is a retain and a release).
    @inlinable
    public func contains(_ key: UInt64) -> Bool {
        find(key) != nil
    }

    /// Sets the value of `key` (below `UInt64.max`); returns the value it replaced.
    @inlinable
    @discardableResult
    public mutating func insert(_ value: Value, forKey key: UInt64) -> Value? {
        precondition(key != .max, "SequenceMap keys are below UInt64.max")
        if (storedCount + 1) * 2 > keys.count { grow() }
        let stored = key &+ 1
        let mask = keys.count - 1
        var index = home(of: stored)
        while true {
            let slotKey = keys[index]
            if slotKey == 0 { break }
            if slotKey == stored {
                let old = values[index]
                values[index] = value
                return old
            }
            index = (index + 1) & mask
        }
        keys[index] = stored
        values[index] = value
        storedCount += 1
        return nil
    }

    /// Removes `key` and returns its value, nil if it had none.
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: UInt64) -> Value? {
        guard let found = find(key) else { return nil }
        let value = values[found]
        // Backward shift: move later members of the probe run into the hole when the hole
        // lies between their home and where they are, so every lookup still ends at a free
        // slot.
        let mask = keys.count - 1
        var hole = found
        var index = (found + 1) & mask
        while true {
            let slotKey = keys[index]
            if slotKey == 0 { break }
            if (index &- home(of: slotKey)) & mask >= (index &- hole) & mask {
                keys[hole] = slotKey
                values.swapAt(hole, index)
                hole = index
            }
            index = (index + 1) & mask
        }
        keys[hole] = 0
        values[hole] = nil
        storedCount -= 1
        return value
    }

    /// Removes every key; keeps the storage when `keepingCapacity`.
    @inlinable
    public mutating func removeAll(keepingCapacity: Bool = false) {
        if keepingCapacity {
            for index in keys.indices {
                keys[index] = 0
                values[index] = nil
            }
        } else {
            keys = []
            values = []
            shift = 64
        }
        storedCount = 0
    }

    /// The slot where the probe for a stored key starts.
    @inlinable
    func home(of stored: UInt64) -> Int {
        // 2^64 / φ: consecutive keys land far apart.
        Int(truncatingIfNeeded: (stored &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    @inlinable
    func find(_ key: UInt64) -> Int? {
        guard storedCount > 0, key != .max else { return nil }
        let stored = key &+ 1
        let mask = keys.count - 1
        var index = home(of: stored)
        while true {
            let slotKey = keys[index]
            if slotKey == stored { return index }
            if slotKey == 0 { return nil }
            index = (index + 1) & mask
        }
    }

    @inlinable
    mutating func grow() {
        let capacity = Swift.max(16, keys.count * 2)
        let oldKeys = keys
        let oldValues = values
        keys = Array(repeating: 0, count: capacity)
        values = Array(repeating: nil, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        storedCount = 0
        for index in oldKeys.indices where oldKeys[index] != 0 {
            insert(oldValues[index]!, forKey: oldKeys[index] - 1)
        }
    }
}

extension SequenceMap: Sequence {
    public struct Iterator: IteratorProtocol {
        @usableFromInline let map: SequenceMap
        @usableFromInline var index = 0

        @inlinable
        init(map: SequenceMap) {
            self.map = map
        }

        @inlinable
        public mutating func next() -> (key: UInt64, value: Value)? {
            while index < map.keys.count {
                defer { index += 1 }
                if map.keys[index] != 0 { return (map.keys[index] - 1, map.values[index]!) }
            }
            return nil
        }
    }

    @inlinable
    public func makeIterator() -> Iterator {
        Iterator(map: self)
    }

    @inlinable
    public var underestimatedCount: Int { storedCount }
}

extension SequenceMap: ExpressibleByDictionaryLiteral {
    @inlinable
    public init(dictionaryLiteral elements: (UInt64, Value)...) {
        self.init()
        for (key, value) in elements { insert(value, forKey: key) }
    }
}

import LinkSession

/// The simulator's one source of randomness: every draw of a world comes from its seed.
package struct SimRandom {
    private var generator: SplitMix64

    package init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    package mutating func next() -> UInt64 { generator.next() }

    /// A draw from `range`.
    package mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    package mutating func int64(_ range: ClosedRange<Int64>) -> Int64 { generator.next(in: range) }

    /// True with probability `p`.
    package mutating func chance(_ p: Double) -> Bool {
        p > 0 && Double(next() >> 11) * 0x1.0p-53 < p
    }

    package mutating func bytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            var word = next()
            for _ in 0..<min(8, count - bytes.count) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return bytes
    }

    /// A new generator for a part of the world, so that its draws do not shift another's.
    package mutating func fork() -> SimRandom { SimRandom(seed: next()) }
}

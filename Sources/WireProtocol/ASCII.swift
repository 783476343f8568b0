import CByteScan

/// ASCII checks: property-list strings are mostly ASCII and can be long.
enum ASCII {
    /// The index (from the start of `bytes`) of the first byte of 0x80 or more, or nil. Eight
    /// bytes a word for a short run, inlined here (most keys and values are short, and the call
    /// into CByteScan costs more than their words: 60-150 instructions a 132 B dictionary
    /// message); from 32 bytes on, CByteScan's vectors (AVX2 where the CPU has it).
    static func firstNonASCII(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return nil }
        if count >= 32 {
            let index = Int(wl_first_non_ascii(base.assumingMemoryBound(to: UInt8.self), count))
            return index < count ? index : nil
        }
        var index = 0
        let high: UInt64 = 0x8080_8080_8080_8080
        while count &- index >= 8 {
            if base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & high != 0 { break }
            index &+= 8
        }
        while index < count {
            if base.load(fromByteOffset: index, as: UInt8.self) >= 0x80 { return index }
            index &+= 1
        }
        return nil
    }

    /// The first byte of 0x80 or more in `bytes`, or nil.
    static func firstNonASCIIByte(in bytes: ArraySlice<UInt8>) -> UInt8? {
        bytes.withUnsafeBytes { raw in firstNonASCII(raw).map { raw[$0] } }
    }
}

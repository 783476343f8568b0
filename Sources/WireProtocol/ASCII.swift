/// ASCII checks 32 and 8 bytes at a time: property-list strings are mostly ASCII and can be long.
enum ASCII {
    /// The index (from the start of `bytes`) of the first byte of 0x80 or more, or nil.
    static func firstNonASCII(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return nil }
        var index = 0
        let high: UInt64 = 0x8080_8080_8080_8080
        while index + 32 <= count {
            let a = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let b = base.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
            let c = base.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
            let d = base.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)
            if (a | b | c | d) & high != 0 { break }
            index += 32
        }
        while index + 8 <= count {
            if base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & high != 0 { break }
            index += 8
        }
        while index < count {
            if base.load(fromByteOffset: index, as: UInt8.self) >= 0x80 { return index }
            index += 1
        }
        return nil
    }

    /// The first byte of 0x80 or more in `bytes`, or nil.
    static func firstNonASCIIByte(in bytes: ArraySlice<UInt8>) -> UInt8? {
        bytes.withUnsafeBytes { raw in firstNonASCII(raw).map { raw[$0] } }
    }
}

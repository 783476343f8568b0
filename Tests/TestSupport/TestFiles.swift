#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem

/// A private temporary directory with a short path (socket paths must fit 108 bytes), removed afterwards.
public func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
    let directory = try FileSystem.makeTemporaryDirectory(prefix: "wlt-", in: "/tmp")
    defer { try? FileSystem.removeRecursively(directory) }
    return try body(directory)
}

/// Deterministic, non-repeating-looking test bytes (xorshift32 from `seed`).
public func patternBytes(count: Int, seed: UInt32 = 1) -> [UInt8] {
    var state = seed &* 2_654_435_761 | 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        return UInt8(truncatingIfNeeded: state)
    }
}

/// The permission bits of the file at `path`.
public func fileMode(_ path: String) throws -> mode_t {
    try FileSystem.permissions(path)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Comparisons of received bytes with what is expected, without making Strings.
enum Bytes {
    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ expected: [UInt8]) -> Bool {
        bytes.count == expected.count && expected.withUnsafeBufferPointer { equalContents(bytes, $0) }
    }

    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ expected: StaticString) -> Bool {
        bytes.count == expected.utf8CodeUnitCount
            && equalContents(bytes, UnsafeBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount))
    }

    private static func equalContents(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count > 0 else { return true }
        return memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }

    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

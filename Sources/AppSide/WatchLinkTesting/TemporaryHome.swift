import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A short temporary directory under /tmp (a Unix socket path has at most 108 bytes), removed
/// by ``remove()``.
public final class TemporaryHome: @unchecked Sendable {
    public let path: String

    public init() {
        var template = Array("/tmp/wl-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        precondition(made != nil, "mkdtemp in /tmp failed: \(String(cString: strerror(errno)))")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ``PropertyListCodec/walkDictionary(_:with:)`` reports of a dictionary, value by value:
/// a container's values between its begin and its end, each dictionary value after its key.
public protocol PropertyListWalker {
    mutating func beginDictionary(count: Int)
    /// An ASCII key.
    mutating func key(_ ascii: UnsafeBufferPointer<UInt8>)
    mutating func endDictionary()
    mutating func beginArray(count: Int)
    mutating func endArray()
    /// An ASCII string.
    mutating func string(_ ascii: UnsafeBufferPointer<UInt8>)
    mutating func integer(_ value: Int64)
    mutating func real(_ value: Double)
    mutating func boolean(_ value: Bool)
    mutating func data(_ bytes: UnsafeBufferPointer<UInt8>)
    mutating func date(_ value: Date)
}

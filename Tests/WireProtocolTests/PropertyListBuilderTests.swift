import Foundation
import WireProtocol
import XCTest

final class PropertyListBuilderTests: XCTestCase {
    /// Told value by value, in any key order, a list encodes as the same value does.
    func testAToldListEncodesAsItsValue() throws {
        var list = PropertyListBuilder()
        list.beginDictionary()
        list.string("zeta")
        list.beginArray()
        list.integer(-1)
        list.real(2.5)
        list.boolean(true)
        [UInt8]([1, 2, 3]).withUnsafeBufferPointer { list.data($0) }
        list.date(Date(timeIntervalSinceReferenceDate: 7))
        list.end()
        list.string("alpha")
        list.beginDictionary()
        list.string("caf\u{E9}")
        list.string("zeta")
        list.end()
        list.string("mid")
        list.string("alpha")
        list.end()
        let value: [String: PropertyListValue] = [
            "zeta": .array([.integer(-1), .real(2.5), .boolean(true), .data([1, 2, 3]), .date(Date(timeIntervalSinceReferenceDate: 7))]),
            "alpha": .dictionary(["caf\u{E9}": .string("zeta")]),
            "mid": .string("alpha"),
        ]
        XCTAssertEqual(try PropertyListCodec.encode(list), try PropertyListCodec.encode(value))
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(PropertyListCodec.encode(list)), value)
    }

    func testTwoKeysOfTheSameBytesAreRefused() {
        var list = PropertyListBuilder()
        list.beginDictionary()
        for key in ["b", "a", "b"] {
            list.string(key)
            list.integer(1)
        }
        list.end()
        XCTAssertThrowsError(try PropertyListCodec.encode(list)) { error in
            XCTAssertEqual("\(error)", "dictionary has the key \"b\" more than once")
        }
    }
}

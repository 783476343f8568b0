import Foundation
import LinkCrypto
import TestSupport
import XCTest

@testable import PushEmulator

final class APNsResponseTests: XCTestCase {
    /// An `apns-id` the endpoint makes is a version 4 UUID in lower case ("a canonical UUID
    /// that's the unique ID for the notification"): Foundation's `UUID` formats the same bytes,
    /// with the version and variant bits RFC 9562 gives a random UUID, the same way.
    func testApnsIdsAreRandomUUIDsInLowerCase() {
        var generator = SeededGenerator(seed: testSeed(default: 2781))
        for round in 0..<200 {
            var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round == 0 { bytes = [UInt8](repeating: 0, count: 16) }
            if round == 1 { bytes = [UInt8](repeating: 0xFF, count: 16) }
            let text = bytes.withUnsafeBufferPointer { RandomUUIDs.text($0, .lower) }
            var expected = bytes
            expected[6] = expected[6] & 0x0F | 0x40
            expected[8] = expected[8] & 0x3F | 0x80
            let uuid = expected.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
            XCTAssertEqual(text, UUID(uuid: uuid).uuidString.lowercased(), "\(bytes)")
            XCTAssertTrue(APNsRequestValidator.isUUID(text))
            // A transferIdentifier is the same UUID in Foundation's upper-case form.
            XCTAssertEqual(bytes.withUnsafeBufferPointer { RandomUUIDs.text($0, .upper) }, UUID(uuid: uuid).uuidString)
        }
        XCTAssertNotEqual(APNsIdSource().next(), APNsIdSource().next())
    }
}

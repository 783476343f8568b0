import Foundation
import XCTest
@testable import LinkControl

final class ISO8601TimestampTests: XCTestCase {
    func testFormatsUTCWithMilliseconds() {
        XCTAssertEqual(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 1_700_000_000.123)), "2023-11-14T22:13:20.123Z")
        XCTAssertEqual(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 951_782_400)), "2000-02-29T00:00:00.000Z")
        XCTAssertEqual(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: -0.001)), "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 0.9996)), "1970-01-01T00:00:01.000Z")
    }

    func testNoStringForADateNoTimestampNames() {
        for seconds in [Double.nan, .infinity, -.infinity, 1e300, -9.3e15] {
            XCTAssertNil(ISO8601Timestamp.string(ifRepresentable: Date(timeIntervalSince1970: seconds)), "\(seconds)")
        }
        XCTAssertEqual(ISO8601Timestamp.string(ifRepresentable: Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00.000Z")
        XCTAssertNotNil(ISO8601Timestamp.string(ifRepresentable: Date(timeIntervalSince1970: 9.1e15)), "about 288 million years")
    }

    func testParsesVariants() {
        let expected = Date(timeIntervalSince1970: 1_700_000_000)
        XCTAssertEqual(ISO8601Timestamp.date(from: "2023-11-14T22:13:20Z"), expected)
        XCTAssertEqual(ISO8601Timestamp.date(from: "2023-11-14T22:13:20.000Z"), expected)
        XCTAssertEqual(ISO8601Timestamp.date(from: "2023-11-15T00:13:20+02:00"), expected)
        XCTAssertEqual(ISO8601Timestamp.date(from: "2023-11-14T17:43:20-0430"), expected)
        XCTAssertEqual(ISO8601Timestamp.date(from: "2023-11-14t22:13:20z"), expected)
        let fractional = ISO8601Timestamp.date(from: "2023-11-14T22:13:20.123456Z")!
        XCTAssertEqual(fractional.timeIntervalSince1970, 1_700_000_000.123456, accuracy: 1e-6)
    }

    func testRejectsMalformed() {
        for text in [
            "", "2023-11-14", "2023-11-14T22:13:20", "2023-11-14 22:13:20Z", "2023-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z", "2023-11-14T24:00:00Z", "2023-11-14T22:60:00Z", "2023-11-14T22:13:20.Z",
            "2023-11-14T22:13:20Zjunk", "2023-11-14T22:13:20+2:00", "23-11-14T22:13:20Z", "2023-11-14T22:13:20+24:00",
        ] {
            XCTAssertNil(ISO8601Timestamp.date(from: text), text)
        }
        XCTAssertNotNil(ISO8601Timestamp.date(from: "2024-02-29T00:00:00Z"))
    }

    func testRoundTripAcrossCenturies() {
        for milliseconds: Int64 in [-62_135_596_800_000, -2_208_988_800_000, 0, 1, 951_868_799_999, 4_102_444_800_000, 253_402_300_799_999] {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let text = ISO8601Timestamp.string(from: date)
            XCTAssertEqual(ISO8601Timestamp.date(from: text).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }, milliseconds, text)
        }
    }
}

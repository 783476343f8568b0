import Foundation
import PowerAuthServer
import PowerAuthSync
import XCTest

final class ClientCounterTests: XCTestCase {
    /// The first master secret of the SDK's compute-derived-keys vectors.
    private let masterSecret = Array(Data(base64Encoded: "H0eFgDSODwztB6kypY920A==")!)

    /// The expected values were computed independently with Python (hmac, hashlib) from the
    /// vector's possession and knowledge keys, following CalculateSignature.
    func testSignUsesTheCurrentCounterThenMovesItOn() {
        var counter = ClientCounter(masterSecret: masterSecret, counterData: Array(0..<16), counterByte: 254)
        XCTAssertEqual(Data(counter.keys.possession).base64EncodedString(), "x13RSfgIgsmbNe8M7dz2lg==")
        let online = counter.sign(Array("hello".utf8), factor: .possessionKnowledge, format: .base64)
        XCTAssertEqual(online.signature, "FxQN+5fV2b/PruHm07SnJ2T6kS27ZMl7d0gzbDRrp9E=")
        XCTAssertEqual(online.counterData, Array(0..<16))
        XCTAssertEqual(counter.counterData.map { String(format: "%02x", $0) }.joined(), "fd835376a663d34066401dacf412796c")
        XCTAssertEqual(counter.counterByte, 255)
        _ = counter.sign([], factor: .possession, format: .base64)
        XCTAssertEqual(counter.counterByte, 0, "the counter byte wraps")
    }

    func testOfflineSignatureAndACounterWithoutByte() {
        var counter = ClientCounter(masterSecret: masterSecret, counterData: Array(0..<16), counterByte: nil)
        let offline = counter.sign(Array("hello".utf8), factor: .possessionKnowledge, format: .decimal(componentLength: 8))
        XCTAssertEqual(offline.signature, "04348199-79470545")
        XCTAssertNil(counter.counterByte, "a counter without a byte stays without one")
    }
}

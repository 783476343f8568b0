import Foundation
import PowerAuthServer
import PowerAuthSync
import XCTest

final class ClientCounterTests: XCTestCase {
    /// The bytes 10 … 1f.
    private let masterSecret: [UInt8] = Array(0x10...0x1F)

    /// The expected values were computed independently with Python (`hmac`, `hashlib`, the
    /// `cryptography` package's AES for the KDF), following `DeriveSecretKey` and
    /// `CalculateSignature`.
    func testSignUsesTheCurrentCounterThenMovesItOn() {
        var counter = ClientCounter(masterSecret: masterSecret, counterData: Array(0..<16), counterByte: 254)
        XCTAssertEqual(Data(counter.keys.possession).base64EncodedString(), "G5S1fgcY1rVjsXCgY9GEfQ==")
        let online = counter.sign(Array("hello".utf8), factor: .possessionKnowledge, format: .base64)
        XCTAssertEqual(online.signature, "5oYfEjG7CYzo9Ck5NQgFakoyPFwB0zfC33hqY/jH/EM=")
        XCTAssertEqual(online.counterData, Array(0..<16))
        XCTAssertEqual(counter.counterData.map { String(format: "%02x", $0) }.joined(), "fd835376a663d34066401dacf412796c")
        XCTAssertEqual(counter.counterByte, 255)
        _ = counter.sign([], factor: .possession, format: .base64)
        XCTAssertEqual(counter.counterByte, 0, "the counter byte wraps")
    }

    func testOfflineSignatureAndACounterWithoutByte() {
        var counter = ClientCounter(masterSecret: masterSecret, counterData: Array(0..<16), counterByte: nil)
        let offline = counter.sign(Array("hello".utf8), factor: .possessionKnowledge, format: .decimal(componentLength: 8))
        XCTAssertEqual(offline.signature, "89718122-26372163")
        XCTAssertNil(counter.counterByte, "a counter without a byte stays without one")
    }
}

import PowerAuthServer
import XCTest

final class CounterTests: XCTestCase {
    private let key: [UInt8] = Array(repeating: 0x42, count: 16)
    private let start: [UInt8] = Array(0..<16)

    func testNextIsTheFirst16BytesOfSHA256() {
        // SHA-256 of the 16 bytes 00…0F, computed independently (Python hashlib).
        let expected = hex("be45cb2605bf36bebde684841a28f0fd")
        XCTAssertEqual(HashCounter.next(start), expected)
        XCTAssertEqual(HashCounter.advance(start, by: 2), HashCounter.next(expected))
        XCTAssertEqual(HashCounter.advance(start, by: 0), start)
    }

    /// The client after `offline` codes the server never saw: (counter data, history).
    private func client(after offline: Int) -> ([UInt8], [[UInt8]]) {
        var value = start
        var history: [[UInt8]] = []
        for _ in 0..<offline {
            history.append(value)
            value = HashCounter.next(value)
        }
        return (value, Array(history.suffix(64)))
    }

    private func compare(clientAhead offline: Int, serverAhead: Int = 0, lookAhead: Int = 20) -> CounterComparison {
        let (value, history) = client(after: offline)
        let serverHash = PowerAuthKDF.counterDataHash(transportKey: key, counterData: HashCounter.advance(start, by: serverAhead))
        return CounterComparison.compare(counterData: value, history: history, serverHash: serverHash, lookAhead: lookAhead, transportKey: key)
    }

    func testInSync() {
        XCTAssertEqual(compare(clientAhead: 0), .inSync)
    }

    func testClientAheadWithinHalfTheWindow() {
        XCTAssertEqual(compare(clientAhead: 1), .clientAhead(distance: 1))
        XCTAssertEqual(compare(clientAhead: 10), .clientAhead(distance: 10))
    }

    func testClientAheadByMoreThanHalfNeedsSynchronisation() {
        XCTAssertEqual(compare(clientAhead: 11), .synchronizationNeeded(distance: 11))
        XCTAssertEqual(compare(clientAhead: 20), .synchronizationNeeded(distance: 20))
    }

    func testClientAheadByMoreThanTheLookAheadIsDeadlock() {
        XCTAssertEqual(compare(clientAhead: 21), .deadlock)
        XCTAssertEqual(compare(clientAhead: 64), .deadlock)
        XCTAssertEqual(compare(clientAhead: 100), .deadlock, "beyond the history nothing matches")
    }

    func testServerAheadWithinTheWindowFastForwards() {
        XCTAssertEqual(compare(clientAhead: 0, serverAhead: 3), .serverAhead(distance: 3, counterData: HashCounter.advance(start, by: 3)))
        XCTAssertEqual(compare(clientAhead: 0, serverAhead: 20), .serverAhead(distance: 20, counterData: HashCounter.advance(start, by: 20)))
        XCTAssertEqual(compare(clientAhead: 0, serverAhead: 21), .deadlock)
    }

    func testUnrelatedCounterIsDeadlock() {
        let result = CounterComparison.compare(counterData: start, history: [], serverHash: Array(repeating: 7, count: 16),
                                               lookAhead: 20, transportKey: key)
        XCTAssertEqual(result, .deadlock)
    }

    func testSmallLookAhead() {
        XCTAssertEqual(compare(clientAhead: 1, lookAhead: 1), .synchronizationNeeded(distance: 1))
        XCTAssertEqual(compare(clientAhead: 2, lookAhead: 1), .deadlock)
    }

    func testAuthenticationCodeDependsOnCounterAndData() {
        let a = HashCounter.authenticationCode(transportKey: key, counterData: start, data: [])
        XCTAssertEqual(a.count, 8)
        XCTAssertTrue(a.allSatisfy(\.isNumber))
        XCTAssertEqual(a, HashCounter.authenticationCode(transportKey: key, counterData: start, data: []))
        XCTAssertNotEqual(a, HashCounter.authenticationCode(transportKey: key, counterData: HashCounter.next(start), data: []))
        XCTAssertNotEqual(a, HashCounter.authenticationCode(transportKey: key, counterData: start, data: [1]))
    }

    private func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}

import PowerAuthServer
import TestSupport
import XCTest

final class CounterTests: XCTestCase {
    private let transportKey: [UInt8] = Array(repeating: 0x42, count: 16)
    private let start: [UInt8] = Array(0..<16)

    /// The SDK's `_NextCounterValue` (SHA-256 reduced by XORing its halves); the value was
    /// computed independently (Python: hashlib.sha256, halves XORed).
    func testNextIsSHA256ReducedByXOR() {
        XCTAssertEqual(HashCounter.next(start), bytes(fromHex: "fd835376a663d34066401dacf412796c"))
        XCTAssertEqual(HashCounter.advance(start, by: 1), bytes(fromHex: "fd835376a663d34066401dacf412796c"))
        XCTAssertEqual(HashCounter.advance(start, by: 0), start)
    }

    /// The SDK's own `testByteCountersDistance`: every server counter 0…9999 against a local
    /// one up to 100 steps away.
    func testByteDistanceAsTheSDKsTest() {
        for counter in 0..<10_000 {
            for expected in -100...100 where counter + expected >= 0 {
                let distance = CounterSynchronization.byteDistance(
                    local: UInt8(truncatingIfNeeded: counter + expected),
                    server: UInt8(truncatingIfNeeded: counter))
                if distance != expected { return XCTFail("counter \(counter), expected \(expected), got \(distance)") }
            }
        }
    }

    private func blob(serverSteps: Int, serverByte: Int, lookAhead: UInt8 = 20, version: UInt8 = 3) -> StatusBlob {
        StatusBlob(
            state: .active, currentVersion: version, upgradeVersion: 3, counterByte: UInt8(truncatingIfNeeded: serverByte),
            failCount: 0, maxFailCount: 5, lookAhead: lookAhead,
            counterDataHash: PowerAuthKDF.counterDataHash(
                transportKey: transportKey,
                counterData: HashCounter.advance(start, by: serverSteps)))
    }

    /// A client that made `clientSteps` signatures from `start` against a server at `serverSteps`.
    private func synchronize(
        client clientSteps: Int, server serverSteps: Int, lookAhead: UInt8 = 20,
        hasByte: Bool = true, version: UInt8 = 3
    ) -> CounterSynchronization.Outcome {
        CounterSynchronization.synchronize(
            counterData: HashCounter.advance(start, by: clientSteps),
            counterByte: hasByte ? UInt8(truncatingIfNeeded: clientSteps) : nil,
            blob: blob(serverSteps: serverSteps, serverByte: serverSteps, lookAhead: lookAhead, version: version),
            transportKey: transportKey)
    }

    func testInSync() {
        XCTAssertEqual(synchronize(client: 7, server: 7), .ok(.inSync))
    }

    func testClientAheadUpToHalfTheLookAheadIsOK() {
        XCTAssertEqual(synchronize(client: 1, server: 0), .ok(.clientAhead(distance: 1)))
        XCTAssertEqual(synchronize(client: 10, server: 0), .ok(.clientAhead(distance: 10)))
    }

    func testClientAheadOverHalfUpToTheLookAheadRecommendsASignature() {
        XCTAssertEqual(synchronize(client: 11, server: 0), .calculateSignature(distance: 11))
        XCTAssertEqual(synchronize(client: 19, server: 0), .calculateSignature(distance: 19))
        XCTAssertEqual(synchronize(client: 20, server: 0), .calculateSignature(distance: 20))
    }

    func testClientAheadOverTheLookAheadIsInvalid() {
        XCTAssertEqual(synchronize(client: 21, server: 0), .invalid)
    }

    /// The SDK tries LA values of its counter (distances 0…LA−1): a server ahead by LA−1 is
    /// adopted, by LA it is a deadlock.
    func testServerAheadByLookAheadMinusOneIsAdoptedByLookAheadIsInvalid() {
        XCTAssertEqual(synchronize(client: 0, server: 3), .updated(counterData: HashCounter.advance(start, by: 3), counterByte: 3))
        XCTAssertEqual(synchronize(client: 0, server: 19), .updated(counterData: HashCounter.advance(start, by: 19), counterByte: 19))
        XCTAssertEqual(synchronize(client: 0, server: 20), .invalid)
        XCTAssertEqual(
            synchronize(client: 250, server: 260), .updated(counterData: HashCounter.advance(start, by: 260), counterByte: 4),
            "the byte distance wraps modulo 256")
    }

    func testHashAndByteMustAgree() {
        // The hash says in step, the byte says ahead: the SDK cannot place it.
        let outcome = CounterSynchronization.synchronize(
            counterData: start, counterByte: 5,
            blob: blob(serverSteps: 0, serverByte: 0), transportKey: transportKey)
        XCTAssertEqual(outcome, .invalid)
        // An unrelated hash with equal bytes.
        var unrelated = blob(serverSteps: 0, serverByte: 0)
        unrelated.counterDataHash = Array(repeating: 7, count: 16)
        XCTAssertEqual(
            CounterSynchronization.synchronize(counterData: start, counterByte: 0, blob: unrelated, transportKey: transportKey),
            .invalid)
    }

    func testWithoutACounterByteTheFirstMatchingStatusCapturesIt() {
        XCTAssertEqual(synchronize(client: 4, server: 4, hasByte: false), .updated(counterData: HashCounter.advance(start, by: 4), counterByte: 4))
        XCTAssertEqual(synchronize(client: 5, server: 4, hasByte: false), .ok(.notChecked))
    }

    func testProtocol2IsNotChecked() {
        XCTAssertEqual(synchronize(client: 40, server: 0, version: 2), .ok(.notChecked))
    }

    func testSmallLookAhead() {
        XCTAssertEqual(synchronize(client: 1, server: 0, lookAhead: 1), .calculateSignature(distance: 1))
        XCTAssertEqual(synchronize(client: 2, server: 0, lookAhead: 1), .invalid)
        XCTAssertEqual(synchronize(client: 0, server: 1, lookAhead: 1), .invalid, "with LA 1 only the current value is tried")
    }
}

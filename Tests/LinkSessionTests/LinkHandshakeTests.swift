import XCTest
import LinkSession
import WireProtocol

final class LinkHandshakeTests: XCTestCase {
    let key = [UInt8](repeating: 0x42, count: 32)

    /// Runs two handshakes against each other until both stop.
    private func run(_ a: inout LinkHandshake, _ b: inout LinkHandshake) -> (LinkHandshake.Step?, LinkHandshake.Step?) {
        var toB: [Frame] = [a.start()]
        var toA: [Frame] = [b.start()]
        var endA: LinkHandshake.Step?, endB: LinkHandshake.Step?
        while !toA.isEmpty || !toB.isEmpty {
            if !toA.isEmpty, endA == nil {
                switch a.receive(toA.removeFirst()) {
                case .send(let frames): toB += frames
                case .refuse(let code, let reason): endA = .refuse(code, reason); toB.append(.goAway(code: code.rawValue, reason: reason))
                case let other: endA = other
                }
            } else {
                toA.removeAll()
            }
            if !toB.isEmpty, endB == nil {
                switch b.receive(toB.removeFirst()) {
                case .send(let frames): toA += frames
                case .refuse(let code, let reason): endB = .refuse(code, reason); toA.append(.goAway(code: code.rawValue, reason: reason))
                case let other: endB = other
                }
            } else {
                toB.removeAll()
            }
        }
        return (endA, endB)
    }

    func testMatchingKeysEstablish() {
        var phone = LinkHandshake(role: .phone, deviceId: "p", key: key)
        var watch = LinkHandshake(role: .watch, deviceId: "w", key: key)
        let (p, w) = run(&phone, &watch)
        // Both speak this release's newest version, the one with the clock frames.
        guard case .established(let peerOfPhone, LinkProtocol.maxVersion)? = p, case .established(let peerOfWatch, LinkProtocol.maxVersion)? = w else {
            return XCTFail("\(String(describing: p)) \(String(describing: w))")
        }
        XCTAssertEqual(peerOfPhone.deviceId, "w")
        XCTAssertEqual(peerOfWatch.deviceId, "p")
    }

    func testWrongKeyIsRefusedOnBothEnds() {
        var phone = LinkHandshake(role: .phone, deviceId: "p", key: key)
        var watch = LinkHandshake(role: .watch, deviceId: "w", key: [UInt8](repeating: 1, count: 32))
        let (p, w) = run(&phone, &watch)
        guard case .refuse(.authenticationFailed, let reason)? = p else { return XCTFail("\(String(describing: p))") }
        XCTAssertTrue(reason.contains("pairing key"), reason)
        guard case .refuse(.authenticationFailed, _)? = w else { return XCTFail("\(String(describing: w))") }
    }

    func testTwoPhonesAreRefused() {
        var a = LinkHandshake(role: .phone, deviceId: "p1", key: key)
        var b = LinkHandshake(role: .phone, deviceId: "p2", key: key)
        let (p, _) = run(&a, &b)
        guard case .refuse(.roleConflict, _)? = p else { return XCTFail("\(String(describing: p))") }
    }

    func testNoCommonVersionIsRefused() {
        var phone = LinkHandshake(role: .phone, deviceId: "p", key: key, minVersion: 1, maxVersion: 1)
        var watch = LinkHandshake(role: .watch, deviceId: "w", key: key, minVersion: 2, maxVersion: 3)
        let (p, w) = run(&phone, &watch)
        guard case .refuse(.versionMismatch, let reason)? = p else { return XCTFail("\(String(describing: p))") }
        XCTAssertTrue(reason.contains("1...1"), reason)
        guard case .refuse(.versionMismatch, _)? = w else { return XCTFail("\(String(describing: w))") }
    }

    func testAdmissionRefusesASecondWatch() {
        var phone = LinkHandshake(role: .phone, deviceId: "p", key: key) { peer in
            (.alreadyConnected, "linked with another watch; refused '\(peer.deviceId)'")
        }
        var watch = LinkHandshake(role: .watch, deviceId: "w2", key: key)
        let (p, w) = run(&phone, &watch)
        guard case .refuse(.alreadyConnected, let reason)? = p else { return XCTFail("\(String(describing: p))") }
        XCTAssertTrue(reason.contains("w2"))
        guard case .peerRefused(let code, _)? = w else { return XCTFail("\(String(describing: w))") }
        XCTAssertEqual(code, GoAwayCode.alreadyConnected.rawValue)
    }

    func testSessionFramesDuringHandshakeAreAProtocolError() {
        var phone = LinkHandshake(role: .phone, deviceId: "p", key: key)
        guard case .refuse(.protocolError, _) = phone.receive(.ping(1)) else { return XCTFail() }
    }
}

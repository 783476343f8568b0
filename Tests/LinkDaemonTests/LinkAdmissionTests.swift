@testable import LinkDaemon
import LinkSession
import WireProtocol
import XCTest

final class LinkAdmissionTests: XCTestCase {
    private func hello(_ role: Role, _ id: String) -> Hello {
        Hello(minVersion: 1, maxVersion: 1, role: role, deviceId: id, nonce: Array(repeating: 0, count: 16))
    }

    func testWatchdLinksWithOnePhone() {
        let free = LinkAdmission.Situation(role: .watch, linkedPhone: nil, linkedWatches: [], pairedWatches: [])
        XCTAssertNil(LinkAdmission.refusal(of: hello(.phone, "p1"), in: free))
        var linked = free
        linked.linkedPhone = "p1"
        let refusal = LinkAdmission.refusal(of: hello(.phone, "p2"), in: linked)
        XCTAssertEqual(refusal?.0, .alreadyConnected)
        XCTAssertEqual(refusal?.1, "the watch is linked with phone 'p1' already; refused phone 'p2'")
    }

    func testPhonedLinksEachWatchOnceAndPairsWhileThereIsRoom() {
        let sixteen = Set((1...PairedWatches.maximumCount).map { "w\($0)" })
        let situation = LinkAdmission.Situation(role: .phone, linkedPhone: nil, linkedWatches: ["w1"], pairedWatches: sixteen)
        XCTAssertEqual(
            LinkAdmission.refusal(of: hello(.watch, "w1"), in: situation)?.1,
            "the phone is linked with watch 'w1' already; refused a second link from it")
        XCTAssertNil(LinkAdmission.refusal(of: hello(.watch, "w2"), in: situation), "a paired watch links again")
        XCTAssertEqual(
            LinkAdmission.refusal(of: hello(.watch, "new"), in: situation)?.1,
            "the phone has 16 watches paired, as many as it keeps; refused watch 'new'")
        var room = situation
        room.pairedWatches.remove("w16")
        XCTAssertNil(LinkAdmission.refusal(of: hello(.watch, "new"), in: room))
    }

    func testAPhoneWithAManualClockLinksOnlyWatchesThatCanFollowIt() {
        var situation = LinkAdmission.Situation(role: .phone, linkedPhone: nil, linkedWatches: [], pairedWatches: [])
        XCTAssertNil(LinkAdmission.refusal(of: hello(.watch, "old"), in: situation), "the system clock needs no clock frames")
        situation.clockIsManual = true
        let refusal = LinkAdmission.refusal(of: hello(.watch, "old"), in: situation)
        XCTAssertEqual(refusal?.0, .versionMismatch)
        XCTAssertEqual(
            refusal?.1,
            "the phone runs a manual clock (phoned --clock manual), which a watch follows from link protocol version 2 on; watch 'old' speaks 1...1: run a watchd of this release"
        )
        let current = Hello(minVersion: 1, maxVersion: LinkProtocol.maxVersion, role: .watch, deviceId: "new", nonce: [])
        XCTAssertNil(LinkAdmission.refusal(of: current, in: situation))
    }

    func testBackoffDoublesUpToItsCapAndResets() {
        var backoff = ReconnectBackoff()
        XCTAssertEqual((0..<7).map { _ in backoff.nextDelay() }, [25, 50, 100, 200, 400, 500, 500])
        backoff.reset()
        XCTAssertEqual(backoff.upcoming, 25)
        XCTAssertEqual(backoff.nextDelay(), 25)
    }
}

import XCTest
@testable import LinkSession
import LinkStore
import WireProtocol

/// The attached app on the session: items handed, acknowledged, handed again after a quit.
final class AppAttachmentTests: XCTestCase {
    private func userInfoSeqs(_ notifications: [SessionNotification]) -> [UInt64] {
        notifications.compactMap {
            if case .userInfoReceived(let seq, _, _) = $0 { return seq }; return nil
        }
    }

    func testHandedItemsAreDeliveredOnlyOnceAcknowledged() {
        let pair = activatedPair()
        pair.command(.phone, .setAppState(.notRunning))
        for n in 1...3 { pair.command(.watch, .transferUserInfo(payload(["n": .integer(Int64(n))]))) }
        pair.pump()
        XCTAssertEqual(userInfoSeqs(pair.phone.notifications), [])

        pair.phone.notifications.removeAll()
        pair.command(.phone, .attachApp(.foreground, .all))
        let handed = userInfoSeqs(pair.phone.notifications)
        XCTAssertEqual(handed.count, 3)
        XCTAssertEqual(pair.phone.store.delivered.count, 0, "nothing counts as delivered before the app says so")
        pair.command(.phone, .acknowledgeDelivery(upTo: handed[0]))
        XCTAssertEqual(pair.phone.store.delivered.count, 1)

        pair.phone.notifications.removeAll()
        pair.command(.phone, .detachApp)
        XCTAssertEqual(pair.phone.session.appState, .notRunning)
        pair.command(.phone, .attachApp(.background, .all))
        XCTAssertEqual(userInfoSeqs(pair.phone.notifications), Array(handed[1...]), "the rest again, in order")
        pair.command(.phone, .acknowledgeDelivery(upTo: handed[2]))
        XCTAssertEqual(pair.phone.store.delivered.count, 3)
        XCTAssertFalse(pair.phone.session.status().hasContentPending)
    }

    func testAnAttachedAppWithoutAReplyHandlerFailsTheSenderWith7014() {
        let pair = activatedPair()
        pair.command(.phone, .attachApp(.foreground, [.message]))
        let token = pair.command(.watch, .sendMessage(.dictionary(payload(["q": 1])), wantsReply: true, timeoutMilliseconds: nil))
        pair.pump()
        assertError(pair.watch.responses[token], .deliveryFailed)
        let plain = pair.command(.watch, .sendMessage(.dictionary(payload(["q": 2])), wantsReply: false, timeoutMilliseconds: nil))
        pair.pump()
        XCTAssertEqual(pair.watch.responses[plain], .success(.empty))
    }
}

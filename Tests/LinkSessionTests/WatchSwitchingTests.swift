import XCTest
@testable import LinkSession
import LinkStore
import WireProtocol

/// Quick watch switching on the phone's session: inactive, then deactivated once the
/// previous watch has everything.
final class WatchSwitchingTests: XCTestCase {
    /// The notifications of the session itself, without the transfers' and messages'.
    private func lifecycle(_ notifications: [SessionNotification]) -> [SessionNotification] {
        notifications.filter {
            switch $0 {
            case .activationDidComplete, .didBecomeInactive, .didDeactivate, .reachabilityDidChange: return true
            default: return false
            }
        }
    }

    /// WCSession.h, sessionDidBecomeInactive: "the session can no longer be used to modify or
    /// add any new transfers"; what was queued for the old watch waits for it.
    func testQueuedItemsStayForTheOldWatchAndDoNotHoldTheSessionInactive() {
        let pair = activatedPair()
        pair.setLink(up: false)
        for n in 1...3 { pair.command(.phone, .transferUserInfo(payload(["n": .integer(Int64(n))]))) }
        pair.phone.notifications.removeAll()

        pair.event(.phone) { $0.becomeInactive(now: 0) }
        XCTAssertEqual(pair.phone.notifications, [.didBecomeInactive, .didDeactivate], "nothing received waits for the app")
        XCTAssertEqual(pair.phone.session.activationState, .notActivated)
        assertError(pair.phone.responses[pair.command(.phone, .transferUserInfo(payload(["n": 4])))], .sessionNotActivated)

        pair.setLink(up: true)
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch), [], "the old watch is not the active one: its queue waits")
        guard case .success(.outstanding(let outstanding))? = pair.phone.responses[pair.command(.phone, .outstandingTransfers)] else {
            return XCTFail("outstanding transfers are still readable")
        }
        XCTAssertEqual(outstanding.count, 3)

        pair.event(.phone) { $0.setActiveWatch(true, now: 0) }
        pair.pump()
        XCTAssertEqual(
            pair.deliveredUserInfo(.watch).map { $0["n"] }, [.integer(1), .integer(2), .integer(3)],
            "switched back: the watch gets its items, in order")
    }

    func testNothingPendingDeactivatesAtOnceAndTheWatchSeesThePhoneUnreachable() {
        let pair = activatedPair()
        XCTAssertTrue(pair.watch.session.isReachable)
        pair.phone.notifications.removeAll()
        pair.event(.phone) { $0.becomeInactive(now: 0) }
        XCTAssertEqual(pair.phone.notifications, [.didBecomeInactive, .reachabilityDidChange(false), .didDeactivate])
        XCTAssertEqual(pair.phone.session.activationState, .notActivated)
        pair.pump()
        XCTAssertFalse(pair.watch.session.isReachable)
        XCTAssertTrue(pair.watch.session.unreachableReason.contains("phone"), pair.watch.session.unreachableReason)
    }

    func testAnInactiveSessionStillDeliversWhatItsWatchSent() {
        let pair = activatedPair()
        pair.command(.phone, .setAppState(.notRunning))
        pair.command(.watch, .transferUserInfo(payload(["from": "watch"])))
        pair.pump()
        XCTAssertTrue(pair.phone.session.status().hasContentPending)

        pair.phone.notifications.removeAll()
        pair.event(.phone) { $0.becomeInactive(now: 0) }
        XCTAssertEqual(pair.phone.session.activationState, .inactive, "a received item still waits for the app")
        pair.pump()
        XCTAssertTrue(pair.watch.session.unreachableReason.contains("inactive"), pair.watch.session.unreachableReason)

        pair.command(.phone, .setAppState(.foreground))
        XCTAssertEqual(pair.deliveredUserInfo(.phone), [["from": "watch"]])
        XCTAssertEqual(pair.phone.session.activationState, .notActivated)
        let received = pair.phone.notifications.firstIndex {
            if case .userInfoReceived = $0 { return true }; return false
        }
        let deactivated = pair.phone.notifications.firstIndex(of: .didDeactivate)
        XCTAssertNotNil(received)
        XCTAssertNotNil(deactivated)
        if let received, let deactivated { XCTAssertLessThan(received, deactivated) }
    }

    /// The small amount of time to deliver what was received is bounded: with the app not
    /// running the session deactivates when it ends, and the item waits for the app.
    func testTheInactivePeriodEndsWhetherOrNotTheAppTookWhatWasReceived() {
        let pair = activatedPair()
        pair.command(.phone, .setAppState(.notRunning))
        pair.command(.watch, .transferUserInfo(payload(["from": "watch"])))
        pair.pump()
        pair.event(.phone) { $0.becomeInactive(now: 0) }
        XCTAssertEqual(pair.phone.session.activationState, .inactive)
        let token = pair.command(.phone, .activate)
        XCTAssertEqual(pair.phone.responses[token], .success(.activationState(.inactive)), "activating while inactive completes as inactive")

        pair.phone.notifications.removeAll()
        pair.event(.phone) { $0.timerFired(.inactiveDelivery, now: 2_000) }
        XCTAssertEqual(pair.phone.session.activationState, .notActivated)
        XCTAssertEqual(lifecycle(pair.phone.notifications), [.didDeactivate])
        XCTAssertTrue(pair.phone.session.status().hasContentPending, "the item is kept for the next activation")
        XCTAssertEqual(pair.deliveredUserInfo(.phone), [])
    }

    /// WCSession.h: "all interactive messages will be cancelled".
    func testMessagesInFlightAreCancelledBothWays() {
        let pair = activatedPair()
        pair.command(.phone, .setReplies(ReplyConfiguration(mode: .manual)))
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .manual)))
        let fromPhone = pair.command(.phone, .sendMessage(.dictionary(payload(["q": 1])), wantsReply: true, timeoutMilliseconds: nil))
        let fromWatch = pair.command(.watch, .sendMessage(.dictionary(payload(["q": 2])), wantsReply: true, timeoutMilliseconds: nil))
        pair.pump()
        XCTAssertNil(pair.phone.responses[fromPhone])
        XCTAssertNil(pair.watch.responses[fromWatch])

        pair.event(.phone) { $0.becomeInactive(now: 0) }
        assertError(pair.phone.responses[fromPhone], .sessionInactive)
        pair.pump()
        assertError(pair.watch.responses[fromWatch], .notReachable)
    }

    func testBecomingInactiveNeedsAnActivatedSession() {
        let pair = DurablePair()
        pair.event(.phone) { $0.becomeInactive(now: 0) }
        XCTAssertEqual(pair.phone.session.activationState, .notActivated)
        XCTAssertEqual(pair.phone.notifications, [])
    }

    func testSettingsOfTheAppAreAdoptedAndTheWatchLearnsThem() {
        let pair = SessionPair()
        pair.linkUp()
        let app = LinkSession(configuration: LinkSession.Configuration(role: .phone))
        _ = app.handle(.setAppState(.background), token: RequestToken(1), now: 0)
        _ = app.handle(.setDeviceFlags([.isComplicationEnabled: true, .isWatchAppInstalled: false]), token: RequestToken(2), now: 0)
        _ = app.handle(.setReplies(ReplyConfiguration(mode: .echo)), token: RequestToken(3), now: 0)
        let actions = pair.phone.adoptSettings(from: app)
        XCTAssertEqual(pair.phone.appState, .background)
        XCTAssertEqual(pair.phone.flags, [.isPaired, .isComplicationEnabled])
        XCTAssertEqual(pair.phone.replies.mode, .echo)
        XCTAssertTrue(
            actions.contains {
                if case .send(.state(let state)) = $0 { return state.appState == .background }; return false
            })
        XCTAssertFalse(
            actions.contains {
                if case .notify = $0 { return true }; return false
            }, "the app heard it from its own session")
        XCTAssertTrue(pair.phone.adoptSettings(from: app).isEmpty, "nothing changes the second time")
    }

    func testSessionsSharingASequenceNeverRepeatASeq() {
        let shared = ReceivedSequence()
        var seqs: [UInt64] = []
        for _ in 0..<2 {
            let session = LinkSession(configuration: LinkSession.Configuration(role: .phone), receivedSequence: shared)
            _ = session.handle(.activate, token: RequestToken(1), now: 0)
            _ = session.linkUp(now: 0)
            for id in 1...2 {
                let actions = session.receive(.message(id: UInt64(id), wantsReply: false, payload: .data([1])), now: 0)
                for case .notify(.messageReceived(let item)) in actions { seqs.append(item.seq) }
            }
        }
        XCTAssertEqual(seqs, [1, 2, 3, 4])
        var state = DurableState()
        state.reservedSeq = 5_000
        let restored = LinkSession(configuration: LinkSession.Configuration(role: .phone), receivedSequence: shared)
        restored.restore(state)
        XCTAssertEqual(shared.next, 5_001, "a store's reservation raises the shared counter")
    }
}

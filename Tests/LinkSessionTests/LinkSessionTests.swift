import XCTest
@testable import LinkSession
import WireProtocol

final class LinkSessionTests: XCTestCase {
    // MARK: Activation

    func testActivationSequence() {
        let pair = SessionPair()
        XCTAssertEqual(pair.phone.activationState, .notActivated)
        let token = pair.command(.phone, .activate)
        XCTAssertEqual(pair.result(token), .success(.activationState(.activated)))
        XCTAssertEqual(pair.phoneNotifications, [.activationDidComplete(.activated)])
        XCTAssertEqual(pair.phone.activationState, .activated)
    }

    func testNothingCanBeSentBeforeActivation() {
        let pair = SessionPair()
        pair.linkUp()
        let token = pair.command(.phone, .sendMessage(encodedDictionary([:]), wantsReply: true, timeoutMilliseconds: nil))
        assertError(pair.result(token), .sessionNotActivated)
    }

    // MARK: Reachability

    func testReachabilityTable() {
        struct Row {
            var link = true, phoneActive = true, watchActive = true
            var phoneApp = AppState.foreground, watchApp = AppState.foreground
            var paired = true, appInstalled = true, companion = true, workout = false
            var phoneReachable: Bool, watchReachable: Bool
        }
        let rows: [Row] = [
            Row(phoneReachable: true, watchReachable: true),
            Row(link: false, phoneReachable: false, watchReachable: false),
            Row(phoneActive: false, phoneReachable: false, watchReachable: false),
            Row(watchActive: false, phoneReachable: false, watchReachable: false),
            // isReachable, WatchKit extension side: "the WatchKit extension is running in the
            // foreground, or is running with a high priority in the background (for example,
            // during a workout session ...)".
            Row(watchApp: .background, phoneReachable: false, watchReachable: false),
            Row(watchApp: .background, workout: true, phoneReachable: true, watchReachable: true),
            Row(watchApp: .notRunning, phoneReachable: false, watchReachable: false),
            Row(phoneApp: .background, phoneReachable: true, watchReachable: true),
            // sendMessage: "calling this method from your WatchKit extension while it is active
            // and running wakes up the corresponding iOS app in the background and makes it reachable".
            Row(phoneApp: .notRunning, phoneReachable: true, watchReachable: true),
            Row(paired: false, phoneReachable: false, watchReachable: false),
            Row(appInstalled: false, phoneReachable: false, watchReachable: false),
            Row(companion: false, phoneReachable: false, watchReachable: false),
        ]
        for (index, row) in rows.enumerated() {
            let pair = SessionPair()
            if row.link { pair.linkUp() }
            if row.phoneActive { pair.command(.phone, .activate) }
            if row.watchActive { pair.command(.watch, .activate) }
            pair.command(.phone, .setAppState(row.phoneApp))
            pair.command(.watch, .setAppState(row.watchApp))
            if row.workout { pair.command(.watch, .setWorkout(true)) }
            pair.command(.phone, .setDeviceFlags([.isPaired: row.paired, .isWatchAppInstalled: row.appInstalled]))
            pair.command(.watch, .setDeviceFlags([.isCompanionAppInstalled: row.companion]))
            XCTAssertEqual(pair.phone.isReachable, row.phoneReachable, "row \(index): phone")
            XCTAssertEqual(pair.watch.isReachable, row.watchReachable, "row \(index): watch")
        }
    }

    func testReachabilityEventsFollowAppStateAndLink() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        XCTAssertTrue(pair.phone.isReachable)
        XCTAssertEqual(pair.phoneNotifications.last, .reachabilityDidChange(true))
        pair.clearNotifications()
        pair.command(.watch, .setAppState(.background))
        XCTAssertEqual(pair.phoneNotifications, [.reachabilityDidChange(false)])
        XCTAssertEqual(
            pair.watchNotifications, [.appStateDidChange(.background), .reachabilityDidChange(false)],
            "a background watch app does not reach the phone either")
        pair.clearNotifications()
        pair.command(.watch, .setAppState(.background))
        XCTAssertEqual(pair.watchNotifications, [], "the same state again is no change")
        pair.command(.watch, .setAppState(.foreground))
        XCTAssertEqual(pair.phoneNotifications, [.reachabilityDidChange(true)])
        XCTAssertEqual(pair.watchNotifications, [.appStateDidChange(.foreground), .reachabilityDidChange(true)])
        pair.clearNotifications()
        pair.linkDown()
        XCTAssertEqual(pair.phoneNotifications, [.reachabilityDidChange(false)])
        XCTAssertEqual(pair.watchNotifications, [.reachabilityDidChange(false)])
        XCTAssertEqual(pair.phone.unreachableReason, "the link is down")
    }

    func testDeviceFlagsBelongToTheirSideAndNotify() {
        let pair = SessionPair()
        let wrong = pair.command(.watch, .setDeviceFlags([.isPaired: false]))
        guard case .failure(.invalidArgument)? = pair.result(wrong) else { return XCTFail("watch has no isPaired") }
        pair.command(.phone, .setDeviceFlags([.isComplicationEnabled: true]))
        XCTAssertEqual(pair.phoneNotifications, [.watchStateDidChange([.isPaired, .isWatchAppInstalled, .isComplicationEnabled])])
        pair.command(.watch, .setDeviceFlags([.isCompanionAppInstalled: false]))
        XCTAssertEqual(pair.watchNotifications, [.companionAppInstalledDidChange(false)])
    }

    // MARK: Send errors

    func testErrorsInWatchConnectivityOrder() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        pair.command(.phone, .setDeviceFlags([.isPaired: false]))
        assertError(pair.result(pair.command(.phone, .sendMessage(.data([1]), wantsReply: false, timeoutMilliseconds: nil))), .deviceNotPaired)
        pair.command(.phone, .setDeviceFlags([.isPaired: true, .isWatchAppInstalled: false]))
        assertError(pair.result(pair.command(.phone, .sendMessage(.data([1]), wantsReply: false, timeoutMilliseconds: nil))), .watchAppNotInstalled)
        pair.command(.phone, .setDeviceFlags([.isWatchAppInstalled: true]))
        pair.command(.watch, .setDeviceFlags([.isCompanionAppInstalled: false]))
        assertError(pair.result(pair.command(.watch, .sendMessage(.data([1]), wantsReply: false, timeoutMilliseconds: nil))), .companionAppNotInstalled)
        pair.command(.watch, .setDeviceFlags([.isCompanionAppInstalled: true]))
        let big = MessagePayload.data([UInt8](repeating: 7, count: 65_537))
        assertError(pair.result(pair.command(.phone, .sendMessage(big, wantsReply: true, timeoutMilliseconds: nil))), .payloadTooLarge)
        let limit = MessagePayload.data([UInt8](repeating: 7, count: 65_536))
        XCTAssertEqual(
            pair.result(pair.command(.phone, .sendMessage(limit, wantsReply: true, timeoutMilliseconds: nil))),
            .success(.reply(.data([]))))
        pair.command(.watch, .setAppState(.background))
        assertError(pair.result(pair.command(.phone, .sendMessage(.data([1]), wantsReply: true, timeoutMilliseconds: nil))), .notReachable)
    }

    // MARK: Messages and replies

    func testMessageWithReplyBothDirections() throws {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        let message: [String: PropertyListValue] = ["cmd": .string("ping"), "n": .integer(1)]
        let token = pair.command(.phone, .sendMessage(encodedDictionary(message), wantsReply: true, timeoutMilliseconds: nil))
        XCTAssertEqual(pair.result(token), .success(.reply(.dictionary([:]))))
        XCTAssertEqual(
            pair.watchNotifications.last,
            .messageReceived(ReceivedItem(seq: 1, kind: .message, content: .dictionary(try CheckedDictionary(message)), replyId: nil)))
        let back = pair.command(.watch, .sendMessage(.data([1, 2, 3]), wantsReply: true, timeoutMilliseconds: nil))
        XCTAssertEqual(pair.result(back), .success(.reply(.data([]))))
    }

    func testMessageWithoutReplyIsAcknowledged() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        let token = pair.command(.phone, .sendMessage(.data([9]), wantsReply: false, timeoutMilliseconds: nil))
        XCTAssertEqual(pair.result(token), .success(.empty))
    }

    func testReplyModes() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        let message = encodedDictionary(["a": .boolean(true)])
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .echo)))
        XCTAssertEqual(
            pair.result(pair.command(.phone, .sendMessage(message, wantsReply: true, timeoutMilliseconds: nil))),
            .success(.reply(.dictionary(["a": .boolean(true)]))))
        let fixed = try! PropertyListCodec.encode(["ok": .integer(1)])
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .fixed, reply: fixed, replyData: [4, 2])))
        XCTAssertEqual(
            pair.result(pair.command(.phone, .sendMessage(message, wantsReply: true, timeoutMilliseconds: nil))),
            .success(.reply(.dictionary(["ok": .integer(1)]))))
        XCTAssertEqual(
            pair.result(pair.command(.phone, .sendMessage(.data([0]), wantsReply: true, timeoutMilliseconds: nil))),
            .success(.reply(.data([4, 2]))))
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .none)))
        let unanswered = pair.command(.phone, .sendMessage(message, wantsReply: true, timeoutMilliseconds: 500))
        XCTAssertNil(pair.result(unanswered))
        pair.advance(by: 499)
        XCTAssertNil(pair.result(unanswered))
        pair.advance(by: 1)
        assertError(pair.result(unanswered), .messageReplyTimedOut)

        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .empty, delayMilliseconds: 300)))
        let delayed = pair.command(.phone, .sendMessage(message, wantsReply: true, timeoutMilliseconds: nil))
        pair.advance(by: 299)
        XCTAssertNil(pair.result(delayed))
        pair.advance(by: 1)
        XCTAssertEqual(pair.result(delayed), .success(.reply(.dictionary([:]))))
    }

    func testManualReply() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .manual)))
        let token = pair.command(.phone, .sendMessage(encodedDictionary(["q": .string("?")]), wantsReply: true, timeoutMilliseconds: nil))
        guard case .messageReceived(let item)? = pair.watchNotifications.last, let replyId = item.replyId else {
            return XCTFail("the watch should see a message with a replyId")
        }
        XCTAssertNil(pair.result(token))
        let wrongKind = pair.command(.watch, .reply(replyId: replyId, payload: .data([1])))
        guard case .failure(.invalidArgument)? = pair.result(wrongKind) else { return XCTFail("kind mismatch must be refused") }
        let answer = pair.command(.watch, .reply(replyId: replyId, payload: encodedDictionary(["a": .string("!")])))
        XCTAssertEqual(pair.result(answer), .success(.empty))
        XCTAssertEqual(pair.result(token), .success(.reply(.dictionary(["a": .string("!")]))))
        let again = pair.command(.watch, .reply(replyId: replyId, payload: encodedDictionary([:])))
        guard case .failure(.invalidArgument)? = pair.result(again) else { return XCTFail("a second reply must be refused") }
    }

    func testOversizedManualReplyFailsBothSides() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .manual)))
        let token = pair.command(.phone, .sendMessage(.data([1]), wantsReply: true, timeoutMilliseconds: nil))
        guard case .messageReceived(let item)? = pair.watchNotifications.last, let replyId = item.replyId else { return XCTFail() }
        let answer = pair.command(.watch, .reply(replyId: replyId, payload: .data([UInt8](repeating: 0, count: 70_000))))
        assertError(pair.result(answer), .payloadTooLarge)
        assertError(pair.result(token), .messageReplyFailed)
    }

    func testPendingSendsFailWithNotReachableWhenTheLinkDrops() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .manual)))
        let first = pair.command(.phone, .sendMessage(.data([1]), wantsReply: true, timeoutMilliseconds: nil))
        let second = pair.command(.phone, .sendMessage(.data([2]), wantsReply: true, timeoutMilliseconds: nil))
        pair.linkDown()
        assertError(pair.result(first), .notReachable)
        assertError(pair.result(second), .notReachable)
        pair.advance(by: 5_000)
        assertError(pair.result(first), .notReachable)
    }

    func testExactlyOneOutcomeEvenWhenTheReplyComesLate() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .manual)))
        let token = pair.command(.phone, .sendMessage(.data([1]), wantsReply: true, timeoutMilliseconds: 100))
        guard case .messageReceived(let item)? = pair.watchNotifications.last, let replyId = item.replyId else { return XCTFail() }
        pair.advance(by: 100)
        assertError(pair.result(token), .messageReplyTimedOut)
        pair.command(.watch, .reply(replyId: replyId, payload: .data([2])))
        assertError(pair.result(token), .messageReplyTimedOut)
    }

    func testMalformedDictionaryFromPeerIsRefusedWith7010() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        let actions = pair.watch.receive(.message(id: 77, wantsReply: true, payload: .dictionary([1, 2, 3])), now: 0)
        guard case .send(.messageError(let id, let code, _))? = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(id, 77)
        XCTAssertEqual(code, UInt16(WCErrorCode.payloadUnsupportedTypes.rawValue))
    }

    func testMessagesArriveInOrder() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        for n in 0..<50 { pair.command(.phone, .sendMessage(.data([UInt8(n)]), wantsReply: false, timeoutMilliseconds: nil), pump: false) }
        pair.pump()
        let received = pair.watchNotifications.compactMap { notification -> UInt8? in
            if case .messageReceived(let item) = notification, case .data(let bytes) = item.content { return bytes.first }
            return nil
        }
        XCTAssertEqual(received, (0..<50).map { UInt8($0) })
        let list = pair.command(.watch, .receivedList(after: 45))
        guard case .success(.received(let items))? = pair.result(list) else { return XCTFail() }
        XCTAssertEqual(items.map(\.seq), [46, 47, 48, 49, 50])
    }

    func testReceivedListKeepsTheNewest() {
        let watch = LinkSession(configuration: .init(role: .watch, receivedListCapacity: 3))
        _ = watch.handle(.activate, token: RequestToken(1), now: 0)
        _ = watch.linkUp(now: 0)
        for n in 1...5 { _ = watch.receive(.message(id: UInt64(n), wantsReply: false, payload: .data([UInt8(n)])), now: 0) }
        let actions = watch.handle(.receivedList(after: nil), token: RequestToken(2), now: 0)
        guard case .respond(_, .success(.received(let items)))? = actions.first else { return XCTFail() }
        XCTAssertEqual(items.map(\.seq), [3, 4, 5])
    }

    /// A list of actions handed back is emptied and handed out again: the third list drained
    /// after it is the same memory, holding only the new actions.
    func testRecycledActionListsAreReusedEmpty() {
        let watch = LinkSession(configuration: .init(role: .watch))
        _ = watch.handle(.activate, token: RequestToken(1), now: 0)
        _ = watch.linkUp(now: 0)
        func receive(_ id: UInt64) -> [SessionAction] {
            watch.receive(.message(id: id, wantsReply: false, payload: .data([UInt8(id)])), now: 0)
        }
        let first = receive(1)
        XCTAssertFalse(first.isEmpty)
        let firstStorage = first.withUnsafeBufferPointer { $0.baseAddress }
        watch.recycle(consume first)
        _ = receive(2)
        let third = receive(3)
        XCTAssertEqual(third.withUnsafeBufferPointer { $0.baseAddress }, firstStorage)
        let received = third.compactMap { action -> UInt8? in
            if case .notify(.messageReceived(let item)) = action, case .data(let bytes) = item.content { return bytes.first }
            return nil
        }
        XCTAssertEqual(received, [3], "only the third message's actions")
        XCTAssertEqual(third.count, receive(4).count)
    }

    /// By default the list keeps 256 KiB of payload: 16 messages of 16 KiB, all of 1,000 small ones.
    func testReceivedListKeeps256KiBOfPayloadByDefault() {
        let watch = LinkSession(configuration: .init(role: .watch))
        _ = watch.handle(.activate, token: RequestToken(1), now: 0)
        _ = watch.linkUp(now: 0)
        for n in 1...20 {
            _ = watch.receive(.message(id: UInt64(n), wantsReply: false, payload: .data([UInt8](repeating: UInt8(n), count: 16_384))), now: 0)
        }
        let actions = watch.handle(.receivedList(after: nil), token: RequestToken(2), now: 0)
        guard case .respond(_, .success(.received(let items)))? = actions.first else { return XCTFail() }
        XCTAssertEqual(items.map(\.seq), Array(5...20))
        for n in 21...1_020 {
            _ = watch.receive(.message(id: UInt64(n), wantsReply: false, payload: .data([UInt8](repeating: 1, count: 256))), now: 0)
        }
        let small = watch.handle(.receivedList(after: nil), token: RequestToken(3), now: 0)
        guard case .respond(_, .success(.received(let smallItems)))? = small.first else { return XCTFail() }
        XCTAssertEqual(smallItems.map(\.seq), Array(21...1_020))
    }
}

import LinkSession
import WireProtocol
import XCTest

/// The emulated OS launching an installed app (AppLaunch.swift), with a fake clock.
final class AppLaunchTests: XCTestCase {
    private func launches(_ pair: SessionPair, _ role: Role) -> [LaunchReason] {
        pair.launches.filter { $0.role == role }.map(\.reason)
    }

    /// An activated pair whose phone app is an installed program that is not running.
    private func pairWithAnInstalledPhoneApp() -> SessionPair {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        pair.command(.phone, .setAppInstalled(true))
        return pair
    }

    private func messagesReceived(_ notifications: [SessionNotification]) -> [ReceivedItem] {
        notifications.compactMap { if case .messageReceived(let item) = $0 { return item } else { return nil } }
    }

    /// WCSession.sendMessage: "Calling this method from your WatchKit extension while it is
    /// active and running wakes up the corresponding iOS app in the background and makes it
    /// reachable."
    func testAWatchMessageLaunchesThePhoneAppAndWaitsForItsSession() throws {
        let pair = pairWithAnInstalledPhoneApp()
        XCTAssertEqual(pair.phone.appState, .notRunning, "installed, the app runs only as its program")
        XCTAssertTrue(pair.watch.isReachable, "the watch still reaches the phone: its message wakes the app")
        let token = pair.command(.watch, .sendMessage(.data([1, 2]), wantsReply: true, timeoutMilliseconds: nil))
        XCTAssertEqual(launches(pair, .phone), [.message])
        XCTAssertNil(pair.result(token), "held for the app")
        XCTAssertEqual(messagesReceived(pair.phoneNotifications).count, 0)

        pair.advance(by: 500)
        pair.command(.phone, .attachApp(.background, .all))
        let item = try XCTUnwrap(messagesReceived(pair.phoneNotifications).last, "the launched app's delegate gets it")
        XCTAssertEqual(item.content, .data([1, 2]))
        pair.command(.phone, .reply(replyId: try XCTUnwrap(item.replyId), payload: .data([3])))
        XCTAssertEqual(pair.result(token), .success(.reply(.data([3]))))
        XCTAssertEqual(pair.phone.appState, .background)
        XCTAssertEqual(launches(pair, .phone), [.message], "one launch")
    }

    func testAMessageWithoutAReplyIsDeliveredOnceTheAppRuns() {
        let pair = pairWithAnInstalledPhoneApp()
        let token = pair.command(.watch, .sendMessage(.data([7]), wantsReply: false, timeoutMilliseconds: nil))
        let second = pair.command(.watch, .sendMessage(.data([8]), wantsReply: false, timeoutMilliseconds: nil))
        XCTAssertEqual(launches(pair, .phone), [.message], "the second message waits for the same launch")
        pair.command(.phone, .attachApp(.background, .all))
        XCTAssertEqual(messagesReceived(pair.phoneNotifications).map(\.content), [.data([7]), .data([8])], "in order")
        XCTAssertEqual(pair.result(token), .success(.empty))
        XCTAssertEqual(pair.result(second), .success(.empty))
    }

    /// A message held longer than the reply timeout fails on the watch as a device's does.
    func testAnAppThatComesTooLateLeavesTheWatchWith7012() {
        let pair = pairWithAnInstalledPhoneApp()
        let inTime = pair.command(.watch, .sendMessage(.data([1]), wantsReply: true, timeoutMilliseconds: nil))
        pair.advance(by: 999)
        pair.command(.phone, .attachApp(.background, .all))
        XCTAssertEqual(messagesReceived(pair.phoneNotifications).count, 1, "999 ms: in time")
        pair.command(.phone, .reply(replyId: messagesReceived(pair.phoneNotifications)[0].replyId!, payload: .data([])))
        XCTAssertEqual(pair.result(inTime), .success(.reply(.data([]))))

        pair.command(.phone, .detachApp)
        let late = pair.command(.watch, .sendMessage(.data([2]), wantsReply: true, timeoutMilliseconds: nil))
        let unanswered = pair.command(.watch, .sendMessage(.data([3]), wantsReply: false, timeoutMilliseconds: nil))
        XCTAssertEqual(launches(pair, .phone), [.message, .message], "quit, the app is launched again")
        pair.advance(by: 1_000)
        assertError(pair.result(late), .messageReplyTimedOut)
        assertError(pair.result(unanswered), .deliveryFailed)
        pair.command(.phone, .attachApp(.background, .all))
        XCTAssertEqual(messagesReceived(pair.phoneNotifications).count, 1, "nothing stale reaches the app")
    }

    func testALaunchThatFailsFailsTheHeldMessagesAtOnce() {
        let pair = pairWithAnInstalledPhoneApp()
        let token = pair.command(.watch, .sendMessage(.data([1]), wantsReply: true, timeoutMilliseconds: nil))
        pair.command(.phone, .appLaunchFailed("the app exited with status 1 before it attached"))
        guard case .failure(.wc(.deliveryFailed, let message))? = pair.result(token) else {
            return XCTFail("\(String(describing: pair.result(token)))")
        }
        XCTAssertEqual(message, "the app exited with status 1 before it attached")
        pair.command(.watch, .sendMessage(.data([2]), wantsReply: false, timeoutMilliseconds: nil))
        XCTAssertEqual(launches(pair, .phone), [.message, .message], "the next message tries again")
    }

    /// WKWatchConnectivityRefreshBackgroundTask: "Background watch connectivity tasks are
    /// triggered whenever the paired device sends data using" the queued methods.
    func testQueuedDataLaunchesTheWatchAppInTheBackground() {
        let pair = SessionPair()
        pair.linkUp()
        pair.activateBoth()
        pair.command(.watch, .setAppInstalled(true))
        XCTAssertEqual(pair.watch.appState, .notRunning)
        XCTAssertFalse(pair.phone.isReachable, "a watch app that is not running is not reachable")
        pair.command(.phone, .setDeviceFlags([.isComplicationEnabled: true]))
        pair.command(.phone, .transferComplicationUserInfo(payload(["temperature": .integer(21)])))
        XCTAssertEqual(launches(pair, .watch), [.backgroundData])
        XCTAssertTrue(pair.watch.status().hasContentPending, "the item waits for the app")
        pair.command(.phone, .updateApplicationContext(payload(["v": .integer(1)])))
        XCTAssertEqual(launches(pair, .watch), [.backgroundData], "one launch for what arrives meanwhile")
        pair.command(.watch, .attachApp(.background, .all))
        XCTAssertTrue(
            pair.watchNotifications.contains { if case .userInfoReceived = $0 { return true } else { return false } },
            "the launched app is handed the complication userInfo")
        pair.command(.watch, .setAppInstalled(false))
        XCTAssertEqual(pair.watch.appState, .background, "an attached app stays as it is")
    }

    func testUninstallingGivesTheAppBackToTheDaemon() {
        let pair = pairWithAnInstalledPhoneApp()
        let token = pair.command(.watch, .sendMessage(.data([1]), wantsReply: true, timeoutMilliseconds: nil))
        pair.command(.phone, .setAppInstalled(false))
        assertError(pair.result(token), .deliveryFailed)
        XCTAssertEqual(pair.phone.appState, .foreground)
        XCTAssertEqual(
            pair.result(pair.command(.watch, .sendMessage(.data([2]), wantsReply: true, timeoutMilliseconds: nil))),
            .success(.reply(.data([]))), "the daemon answers again (replies.set)")
    }
}

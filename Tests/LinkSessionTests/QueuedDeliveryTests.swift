import TestSupport
import XCTest
import LinkSession
import LinkStore
import WireProtocol

final class QueuedDeliveryTests: XCTestCase {
    private func transferId(_ result: Result<CommandResult, SessionError>?) -> String? {
        if case .success(.transfer(let id, _))? = result { return id }
        return nil
    }

    func testTransfersArriveInOrderAndFinish() {
        let pair = activatedPair()
        var ids: [String] = []
        for n in 0..<10 {
            let token = pair.command(.phone, .transferUserInfo(payload(["n": .integer(Int64(n))])))
            ids.append(transferId(pair.phone.responses[token])!)
        }
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch).map { $0["n"] }, (0..<10).map { .integer(Int64($0)) })
        let finished = pair.phone.notifications.compactMap { notification -> String? in
            if case .userInfoDidFinish(let id, nil, _) = notification { return id }
            return nil
        }
        XCTAssertEqual(finished, ids)
        XCTAssertEqual(pair.phone.session.status().outstandingUserInfoTransfers, 0)
    }

    func testTransferBeforeActivationAndOversizedAreRefused() {
        let pair = DurablePair()
        let early = pair.command(.phone, .transferUserInfo(payload([:])))
        guard case .failure(.wc(.sessionNotActivated, _))? = pair.phone.responses[early] else { return XCTFail() }
        pair.command(.phone, .activate)
        let big = pair.command(.phone, .transferUserInfo([UInt8](repeating: 0, count: 65_537)))
        guard case .failure(.wc(.payloadTooLarge, _))? = pair.phone.responses[big] else { return XCTFail() }
    }

    func testDeliveryWaitsForActivationAndARunningApp() {
        let pair = DurablePair()
        pair.command(.phone, .activate)
        pair.setLink(up: true)
        pair.command(.phone, .transferUserInfo(payload(["n": 1])))
        pair.command(.phone, .transferUserInfo(payload(["n": 2])))
        pair.pump()
        XCTAssertTrue(pair.watch.session.status().hasContentPending)
        XCTAssertEqual(pair.deliveredUserInfo(.watch).count, 0)
        pair.command(.watch, .setAppState(.notRunning))
        pair.command(.watch, .activate)
        XCTAssertEqual(pair.deliveredUserInfo(.watch).count, 0, "a notRunning app gets nothing yet")
        pair.command(.watch, .setAppState(.foreground))
        XCTAssertEqual(pair.deliveredUserInfo(.watch).map { $0["n"] }, [.integer(1), .integer(2)])
        XCTAssertFalse(pair.watch.session.status().hasContentPending)
    }

    func testCancelBeforeSendingAndAfterDelivery() {
        let pair = activatedPair()
        pair.setLink(up: false)
        let first = transferId(pair.phone.responses[pair.command(.phone, .transferUserInfo(payload(["n": 1])))])!
        let second = transferId(pair.phone.responses[pair.command(.phone, .transferUserInfo(payload(["n": 2])))])!
        XCTAssertEqual(pair.phone.responses[pair.command(.phone, .cancelTransfer(transferId: first))], .success(.cancelled(true)))
        pair.setLink(up: true)
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch).map { $0["n"] }, [.integer(2)])
        XCTAssertEqual(pair.phone.responses[pair.command(.phone, .cancelTransfer(transferId: second))], .success(.cancelled(false)))
    }

    func testOutstandingSurvivesACrash() {
        let pair = activatedPair()
        pair.setLink(up: false)
        for n in 1...3 { pair.command(.phone, .transferUserInfo(payload(["n": .integer(Int64(n))]))) }
        pair.crash(.phone)
        let token = pair.command(.phone, .outstandingTransfers)
        guard case .success(.outstanding(let list))? = pair.phone.responses[token] else { return XCTFail() }
        XCTAssertEqual(list.count, 3)
        XCTAssertFalse(list.contains { $0.isTransferring })
        pair.setLink(up: true)
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch).count, 3)
    }

    func testContextLatestWinsAndEqualContextIsNotDeliveredAgain() {
        let pair = activatedPair()
        pair.setLink(up: false)
        for n in 1...4 { pair.command(.phone, .updateApplicationContext(payload(["v": .integer(Int64(n))]))) }
        pair.setLink(up: true)
        pair.pump()
        let received = pair.watch.notifications.compactMap { notification -> [String: PropertyListValue]? in
            if case .applicationContextReceived(_, let context) = notification { return try? PropertyListCodec.decodeDictionary(context) }
            return nil
        }
        XCTAssertEqual(received, [["v": .integer(4)]])
        pair.command(.phone, .updateApplicationContext(payload(["v": 4])))
        pair.pump()
        XCTAssertEqual(
            pair.watch.notifications.filter {
                if case .applicationContextReceived = $0 { return true }; return false
            }.count, 1)
        let token = pair.command(.watch, .applicationContext)
        XCTAssertEqual(pair.watch.responses[token], .success(.contexts(applicationContext: nil, received: payload(["v": 4]))))
    }

    func testComplicationBudgetAndFallback() {
        let pair = activatedPair()
        // WCSession.h: "Count will be 0 whenever the complication is not enabled"; "if this is 0,
        // the complicationUserInfo will be transferred as regular userInfos".
        XCTAssertEqual(pair.phone.session.status().remainingComplicationUserInfoTransfers, 0)
        let off = pair.command(.phone, .transferComplicationUserInfo(payload(["off": true])))
        guard case .success(.transfer(_, 0))? = pair.phone.responses[off] else { return XCTFail("\(String(describing: pair.phone.responses[off]))") }
        pair.pump()
        pair.command(.phone, .setDeviceFlags([.isComplicationEnabled: true]))
        XCTAssertEqual(pair.phone.session.status().remainingComplicationUserInfoTransfers, 50)
        for expected in stride(from: 49, through: 0, by: -1) {
            let token = pair.command(.phone, .transferComplicationUserInfo(payload([:])))
            guard case .success(.transfer(_, let remaining))? = pair.phone.responses[token] else { return XCTFail() }
            XCTAssertEqual(remaining, expected)
            pair.pump()
        }
        pair.command(.phone, .transferComplicationUserInfo(payload(["late": true])))
        pair.pump()
        let tags = pair.watch.store.delivered.map { $0.flags.contains(.currentComplication) }
        XCTAssertEqual(tags, [false] + Array(repeating: true, count: 50) + [false])
        XCTAssertEqual(pair.phone.session.status().remainingComplicationUserInfoTransfers, 0)
    }

    func testANewerComplicationItemTakesTheTag() {
        let pair = activatedPair()
        pair.command(.phone, .setDeviceFlags([.isComplicationEnabled: true]))
        pair.setLink(up: false)
        pair.command(.phone, .transferComplicationUserInfo(payload(["n": 1])))
        pair.command(.phone, .transferComplicationUserInfo(payload(["n": 2])))
        let token = pair.command(.phone, .outstandingTransfers)
        guard case .success(.outstanding(let list))? = pair.phone.responses[token] else { return XCTFail() }
        XCTAssertEqual(list.map(\.isCurrentComplicationInfo), [false, true])
        XCTAssertEqual(
            list.map { try? PropertyListCodec.decodeDictionary($0.payload) }, [["n": 1], ["n": 2]],
            "the older one, a plain userInfo now, keeps its place: never an older value after a newer one")
    }

    /// WCSession: transferCurrentComplicationUserInfo "has a higher priority and is transmitted
    /// right away": ahead of plain userInfo items not yet sent, never ahead of one on the link.
    func testTheCurrentComplicationItemGoesAheadOfUnsentItemsAcrossARestart() {
        let pair = activatedPair()
        pair.command(.phone, .setDeviceFlags([.isComplicationEnabled: true]))
        pair.command(.phone, .transferUserInfo(payload(["n": 1])))
        pair.pump()
        pair.setLink(up: false)
        for n in 2...4 { pair.command(.phone, .transferUserInfo(payload(["n": .integer(Int64(n))]))) }
        pair.command(.phone, .transferComplicationUserInfo(payload(["complication": true])))
        pair.command(.phone, .transferUserInfo(payload(["n": 5])))
        pair.command(.phone, .transferComplicationUserInfo(payload(["complication": 2])))
        pair.crash(.phone)
        pair.command(.phone, .activate)
        pair.setLink(up: true)
        pair.pump()
        let delivered = pair.deliveredUserInfo(.watch)
        XCTAssertEqual(delivered, [["n": 1], ["complication": true], ["complication": 2], ["n": 2], ["n": 3], ["n": 4], ["n": 5]])
        XCTAssertEqual(pair.watch.store.delivered.map { $0.flags.contains(.currentComplication) }, [false, false, true, false, false, false, false])
    }

    /// A newer current complication item goes behind an older one that lost its tag, also
    /// once the item that took the tag from it was cancelled (found by the simulator: the
    /// older value reached the watch after the newer ones).
    func testACurrentComplicationItemNeverOvertakesAnOlderOne() {
        let pair = activatedPair()
        pair.command(.phone, .setDeviceFlags([.isComplicationEnabled: true]))
        pair.setLink(up: false)
        pair.command(.phone, .transferComplicationUserInfo(payload(["complication": 1])))
        let second = pair.command(.phone, .transferComplicationUserInfo(payload(["complication": 2])))
        guard case .success(.transfer(let secondId, _))? = pair.side(.phone).responses[second] else {
            return XCTFail("the second complication transfer was not accepted")
        }
        pair.command(.phone, .cancelTransfer(transferId: secondId))
        pair.command(.phone, .transferUserInfo(payload(["n": 1])))
        pair.command(.phone, .transferComplicationUserInfo(payload(["complication": 3])))
        pair.setLink(up: true)
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch), [["complication": 1], ["complication": 3], ["n": 1]])
    }

    /// Random transfers both ways, random frame delivery, random crashes of either side and
    /// link drops: every acknowledged transfer arrives exactly once and in order.
    func testExactlyOnceInOrderAcrossRandomCrashes() {
        for seed in testSeeds(default: 1...20) {
            var random = SeededGenerator(seed: seed)
            let pair = activatedPair()
            var attempts: [Role: Int] = [.phone: 0, .watch: 0]
            var acknowledged: [Role: Set<Int>] = [.phone: [], .watch: []]
            for _ in 0..<600 {
                let role: Role = random.next() % 2 == 0 ? .phone : .watch
                let crashPoint: DurablePair.CrashPoint? =
                    switch random.next() % 40 {
                    case 0: .beforeCommit
                    case 1: .afterCommit
                    default: nil
                    }
                switch random.next() % 10 {
                case 0...3:
                    let n = attempts[role]!
                    attempts[role] = n + 1
                    let token = pair.command(role, .transferUserInfo(payload(["n": .integer(Int64(n))])), crash: crashPoint)
                    if case .success? = pair.side(role).responses[token] { acknowledged[role]!.insert(n) }
                case 4...7:
                    pair.deliverOne(to: role, crash: crashPoint)
                case 8:
                    if random.next() % 4 == 0 { pair.crash(role) }
                default:
                    if random.next() % 3 == 0 { pair.setLink(up: !pair.linkUp) }
                }
            }
            pair.setLink(up: true)
            pair.pump()
            for sender in [Role.phone, .watch] {
                let receiver: Role = sender == .phone ? .watch : .phone
                let received = pair.deliveredUserInfo(receiver).compactMap { value -> Int? in
                    if case .integer(let n)? = value["n"] { return Int(n) }
                    return nil
                }
                XCTAssertEqual(received, received.sorted(), "seed \(seed): in order")
                XCTAssertEqual(Set(received).count, received.count, "seed \(seed): no duplicates")
                XCTAssertTrue(acknowledged[sender]!.isSubset(of: Set(received)), "seed \(seed): nothing acknowledged lost")
                XCTAssertEqual(pair.side(sender).session.status().outstandingUserInfoTransfers, 0, "seed \(seed)")
            }
        }
    }

    /// What was queued before the watch app was uninstalled (or the watch unpaired) waits,
    /// outstanding and cancellable, and goes once it is installed again: nothing accepted is
    /// lost, and Apple documents no outcome for it (docs/app-side.md).
    func testQueuedItemsWaitWhileTheWatchAppIsUninstalledAndGoWhenItIsBack() {
        let pair = activatedPair()
        pair.setLink(up: false)
        guard case .success(.transfer)? = pair.phone.responses[pair.command(.phone, .transferUserInfo(payload(["n": .integer(1)])))] else {
            return XCTFail("accepted")
        }
        pair.command(.phone, .setDeviceFlags([.isWatchAppInstalled: false]))
        pair.setLink(up: true)
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch), [], "held while the watch app is not installed")
        XCTAssertEqual(pair.phone.session.status().outstandingUserInfoTransfers, 1)
        pair.command(.phone, .setDeviceFlags([.isPaired: false, .isWatchAppInstalled: true]))
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch), [], "and while no watch is paired")
        pair.command(.phone, .setDeviceFlags([.isPaired: true]))
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch), [["n": .integer(1)]])
        XCTAssertEqual(pair.phone.session.status().outstandingUserInfoTransfers, 0)
    }
}

/// A receiver without room refuses what the failed turn received, and keeps refusing it: the
/// sender may lose the ITEM_ERROR with the link that the refusal restarts.
final class RefusalTests: XCTestCase {
    private func itemErrors(_ actions: [SessionAction]) -> [UInt64] {
        actions.compactMap {
            if case .send(.itemError(_, let seq, 7015, _)) = $0 { return seq }; return nil
        }
    }

    func testARefusedItemIsRefusedAgainAfterALinkRestartAndNothingIsWritten() {
        let watch = LinkSession(configuration: LinkSession.Configuration(role: .watch))
        _ = watch.handle(.activate, token: RequestToken(1), now: 0)
        _ = watch.linkUp(now: 0)
        let item = Frame.item(channel: QueueChannel.userInfo.rawValue, seq: 1, flags: 0, payload: payload(["n": 1]))
        _ = watch.receive(item, now: 0)
        _ = watch.flushAcknowledgements()  // the turn is being committed ...
        let refused = watch.refuseUncommittedItems(.wc(.insufficientSpace, "disk full"))  // ... and failed
        XCTAssertEqual(itemErrors(refused), [1])

        _ = watch.linkDown(now: 1)
        XCTAssertEqual(itemErrors(watch.linkUp(now: 2)), [1], "said again when the link is back")
        let again = watch.receive(item, now: 3)
        XCTAssertEqual(itemErrors(again), [1], "the same item sent again is refused again")
        XCTAssertFalse(
            again.contains {
                if case .persist = $0 { return true }; return false
            }, "and nothing of it is written")
    }
}

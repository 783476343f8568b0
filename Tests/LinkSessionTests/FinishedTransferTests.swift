import LinkSession
import LinkStore
import WireProtocol
import XCTest

/// `didFinish` at the app's next launch (FinishedTransfers.swift), `WCSession.h`,
/// `session:didFinishUserInfoTransfer:error:`: "Will be called on next launch if the sender was
/// not running when the user info finished." With in-memory stores, so a restart of the daemon
/// in between keeps what is to be told.
final class FinishedTransferTests: XCTestCase {
    private func attachApp(_ pair: DurablePair, _ role: Role = .phone) {
        pair.command(role, .attachApp(.foreground, .all))
    }

    private func quitApp(_ pair: DurablePair, _ role: Role = .phone) {
        pair.command(role, .detachApp)
    }

    private func didFinish(_ side: DurablePair.Side) -> [(id: String, error: SessionError?, earlier: EarlierTransfer?)] {
        side.notifications.compactMap { notification in
            switch notification {
            case .userInfoDidFinish(let id, let error, let earlier): return (id, error, earlier)
            case .file(.didFinish(let id, let error, let earlier)): return (id, error, earlier)
            default: return nil
            }
        }
    }

    private func transferId(_ result: Result<CommandResult, SessionError>?) throws -> String {
        guard case .success(.transfer(let id, _))? = result else { throw XCTSkip("no transfer: \(String(describing: result))") }
        return id
    }

    /// The app queues a userInfo and quits; the watch acknowledges it while the app is not
    /// running (and the daemon restarts); the app's next launch is told, once.
    func testAUserInfoThatFinishedWhileTheAppWasAwayIsToldAtItsNextLaunchOnce() throws {
        let pair = activatedPair()
        pair.setLink(up: false)
        attachApp(pair)
        let id = try transferId(pair.phone.responses[pair.command(.phone, .transferUserInfo(payload(["n": .integer(1)])))])
        quitApp(pair)
        pair.setLink(up: true)
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch), [["n": .integer(1)]])
        XCTAssertEqual(pair.phone.storedState.finished.map(\.transferId), [id], "kept for the next launch")

        pair.crash(.phone)
        pair.phone.notifications.removeAll()
        attachApp(pair)
        let told = didFinish(pair.phone)
        XCTAssertEqual(told.map(\.id), [id])
        XCTAssertNil(told.first?.error)
        let earlier = try XCTUnwrap(told.first?.earlier, "with what the transfer object needs")
        XCTAssertEqual(earlier.payload, payload(["n": .integer(1)]))
        XCTAssertFalse(earlier.isCurrentComplicationInfo)
        let seq = try XCTUnwrap(earlier.seq)

        // Killed before its delegate returned: told again; acknowledged: never again.
        quitApp(pair)
        pair.phone.notifications.removeAll()
        attachApp(pair)
        XCTAssertEqual(didFinish(pair.phone).map(\.id), [id], "not acknowledged: told again")
        pair.command(.phone, .acknowledgeDelivery(upTo: seq))
        XCTAssertEqual(pair.phone.storedState.finished, [])
        quitApp(pair)
        pair.phone.notifications.removeAll()
        attachApp(pair)
        XCTAssertTrue(didFinish(pair.phone).isEmpty, "once")
    }

    /// "... completed or failed with an error": a failure is told at the next launch too.
    func testATransferThatFailedWhileTheAppWasAwayIsToldWithItsError() throws {
        let pair = activatedPair()
        pair.setLink(up: false)
        attachApp(pair)
        let id = try transferId(pair.phone.responses[pair.command(.phone, .transferUserInfo(payload(["n": .integer(2)])))])
        quitApp(pair)
        pair.command(.phone, .timeOutTransfer(transferId: id))
        attachApp(pair)
        let told = try XCTUnwrap(didFinish(pair.phone).last)
        XCTAssertEqual(told.id, id)
        guard case .wc(.transferTimedOut, _)? = told.error else { return XCTFail("\(String(describing: told.error))") }
        XCTAssertNotNil(told.earlier?.seq)
    }

    func testAFileThatFinishedWhileTheAppWasAwayIsToldWithItsNameAndMetadata() throws {
        let pair = activatedPair()
        pair.setLink(up: false)
        attachApp(pair)
        pair.phone.files.sources["/source/photo.jpg"] = [1, 2, 3, 4]
        let metadata = payload(["kind": .string("photo")])
        let token = pair.command(.phone, .file(.transfer(path: "/source/photo.jpg", metadata: metadata)))
        pair.deliverFileEvent(to: .phone)
        let id = try transferId(pair.phone.responses[token])
        quitApp(pair)
        pair.setLink(up: true)
        pair.pump()
        pair.phone.notifications.removeAll()
        attachApp(pair)
        let told = try XCTUnwrap(didFinish(pair.phone).first)
        XCTAssertEqual(told.id, id)
        XCTAssertNil(told.error)
        XCTAssertEqual(told.earlier?.payload, metadata)
        XCTAssertEqual(told.earlier?.file?.name, "photo.jpg")
        XCTAssertEqual(told.earlier?.file?.totalBytes, 4)
        XCTAssertEqual(told.earlier?.file?.path, pair.phone.session.filePaths.outbox(id))
    }

    /// A transfer the daemon made while it played the app (no app process attached) is not an
    /// app process's: nothing is kept for a launch.
    func testATransferMadeWithoutAnAppProcessIsToldLiveOnly() throws {
        let pair = activatedPair()
        pair.setLink(up: false)
        let id = try transferId(pair.phone.responses[pair.command(.phone, .transferUserInfo(payload(["n": .integer(3)])))])
        pair.setLink(up: true)
        pair.pump()
        XCTAssertEqual(didFinish(pair.phone).map(\.id), [id])
        XCTAssertEqual(pair.phone.storedState.finished, [])
        pair.phone.notifications.removeAll()
        attachApp(pair)
        XCTAssertTrue(didFinish(pair.phone).isEmpty)
    }

    /// A transfer of an earlier launch that finishes while the next one runs is told at once,
    /// with what that process needs to make its transfer object; its own transfers are told
    /// by id only.
    func testALaterProcessIsToldOfAnEarlierLaunchsTransferWithItsPayload() throws {
        let pair = activatedPair()
        pair.setLink(up: false)
        attachApp(pair)
        let earlierId = try transferId(pair.phone.responses[pair.command(.phone, .transferUserInfo(payload(["n": .integer(4)])))])
        quitApp(pair)
        attachApp(pair)
        let ownId = try transferId(pair.phone.responses[pair.command(.phone, .transferUserInfo(payload(["n": .integer(5)])))])
        pair.setLink(up: true)
        pair.pump()
        let told = didFinish(pair.phone)
        XCTAssertEqual(told.map(\.id), [earlierId, ownId])
        XCTAssertEqual(told[0].earlier?.payload, payload(["n": .integer(4)]))
        XCTAssertNil(told[0].earlier?.seq, "told live: nothing to acknowledge")
        XCTAssertNil(told[1].earlier)
        XCTAssertEqual(pair.phone.storedState.finished, [])
    }

    /// What waited for the app goes to it in `seq` order: received items and finished
    /// transfers alike.
    func testReceivedItemsAndFinishedTransfersAreHandedInSeqOrder() throws {
        let pair = activatedPair()
        pair.setLink(up: false)
        attachApp(pair)
        pair.command(.phone, .transferUserInfo(payload(["n": .integer(6)])))
        quitApp(pair)
        pair.setLink(up: true)
        pair.pump()
        pair.command(.watch, .transferUserInfo(payload(["from": .string("watch")])))
        pair.pump()
        pair.phone.notifications.removeAll()
        attachApp(pair)
        let order = pair.phone.notifications.compactMap { notification -> String? in
            switch notification {
            case .userInfoDidFinish(_, _, let earlier?): return "finished \(earlier.seq ?? 0)"
            case .userInfoReceived(let seq, _, _): return "received \(seq)"
            default: return nil
            }
        }
        XCTAssertEqual(order.count, 2)
        let seqs = order.compactMap { $0.split(separator: " ").last.flatMap { UInt64($0) } }
        XCTAssertEqual(seqs, seqs.sorted(), "\(order)")
    }
}

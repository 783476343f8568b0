import Foundation
@testable import LinkDaemon
import LinkSession
import LinkStore
import WireProtocol
import XCTest

/// The commit-before-answer rule without sockets: what depends on a write is released only
/// once the turn's transaction committed, and fails when it did not.
final class TurnCommitterTests: XCTestCase {
    private var directory = ""
    private var peer: PeerSession!
    private var committer: TurnCommitter!
    private var executed: [SessionAction] = []
    private var failedPeers: [ObjectIdentifier] = []

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "tc-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        peer = PeerSession(deviceId: nil, session: LinkSession(configuration: .init(role: .phone, defaultReplyTimeoutMilliseconds: 1_000)))
        peer.store = try DeliveryStore(path: directory + "/phone.db")
        let peer = peer!
        committer = TurnCommitter(peers: { [peer] })
        committer.execute = { [unowned self] action, _ in self.executed.append(action) }
        committer.storeFailed = { [unowned self] peer, _ in self.failedPeers.append(ObjectIdentifier(peer)) }
    }

    override func tearDown() {
        peer.store?.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private var answers: [Result<CommandResult, SessionError>] {
        executed.compactMap { if case .respond(_, let result) = $0 { return result } else { return nil } }
    }

    func testWithoutWritesActionsGoAtOnce() {
        committer.perform([.respond(RequestToken(1), .success(.empty))], from: peer)
        XCTAssertEqual(answers.count, 1)
    }

    func testWhatFollowsAWriteWaitsForTheCommit() throws {
        committer.perform([.persist(.setApplicationContext([1, 2, 3])), .respond(RequestToken(1), .success(.contextUpdated))], from: peer)
        committer.perform([.respond(RequestToken(2), .success(.empty))], from: peer)
        XCTAssertTrue(executed.isEmpty, "nothing goes out before the commit, not even a later answer of the turn")
        XCTAssertTrue(peer.store!.inTransaction)
        committer.endOfTurn()
        XCTAssertEqual(answers.count, 2)
        guard case .success(.contextUpdated) = answers[0] else { return XCTFail("\(answers)") }
        XCTAssertFalse(peer.store!.inTransaction)
        XCTAssertEqual(try peer.store!.load().applicationContext, [1, 2, 3], "committed before it was answered")
    }

    /// The tokens of the answers executed, in order.
    private var answeredTokens: [UInt64] {
        executed.compactMap { if case .respond(let token, _) = $0 { return token.rawValue } else { return nil } }
    }

    func testWhatWaitedGoesOnceInOrderAndWhatItCausesWaitsForTheNextCommit() throws {
        // Answer 2, run at the commit, writes again: what follows that write waits for the
        // next commit, and nothing runs twice or is lost as the lists change places.
        committer.execute = { [unowned self] action, peer in
            self.executed.append(action)
            if case .respond(let token, _) = action, token.rawValue == 2 {
                self.committer.perform([.persist(.setApplicationContext([7])), .respond(RequestToken(3), .success(.contextUpdated))], from: peer)
            }
        }
        committer.perform(
            [
                .persist(.setApplicationContext([1])), .respond(RequestToken(1), .success(.contextUpdated)),
                .respond(RequestToken(2), .success(.empty)),
            ], from: peer)
        committer.endOfTurn()
        XCTAssertEqual(answeredTokens, [1, 2])
        XCTAssertTrue(peer.store!.inTransaction, "the write made at the commit waits for the next one")
        committer.endOfTurn()
        XCTAssertEqual(answeredTokens, [1, 2, 3])
        XCTAssertFalse(peer.store!.inTransaction)
        XCTAssertEqual(try peer.store!.load().applicationContext, [7])
        for turn in UInt64(4)...6 {
            committer.perform([.persist(.setApplicationContext([UInt8(turn)])), .respond(RequestToken(turn), .success(.contextUpdated))], from: peer)
            XCTAssertEqual(answeredTokens.count, Int(turn) - 1, "turn \(turn): the answer waits for the commit")
            committer.endOfTurn()
        }
        XCTAssertEqual(answeredTokens, [1, 2, 3, 4, 5, 6])
        committer.endOfTurn()
        XCTAssertEqual(answeredTokens, [1, 2, 3, 4, 5, 6], "a turn without writes runs nothing that waited before")
        XCTAssertEqual(executed.count, 6, "nothing but what waited runs: \(executed)")
    }

    func testAFailedTurnFailsWhatPromisedDurabilityAndKeepsNothing() throws {
        committer.perform(
            [
                .persist(.setApplicationContext([9])), .respond(RequestToken(1), .success(.contextUpdated)),
                .respond(RequestToken(2), .success(.empty)),
            ], from: peer)
        committer.failTurn(WriteFailed(), of: peer)
        committer.endOfTurn()
        XCTAssertEqual(answers.count, 2)
        guard case .failure(.wc(let code, _)) = answers[0] else { return XCTFail("\(answers)") }
        XCTAssertEqual(code, .genericError)
        guard case .success(.empty) = answers[1] else { return XCTFail("an answer that promised nothing goes as it was") }
        XCTAssertEqual(failedPeers, [ObjectIdentifier(peer)], "the peer reloads and resynchronises")
        XCTAssertNil(try peer.store!.load().applicationContext, "rolled back")
    }

    private struct WriteFailed: Error {}

    /// A store's state with item 1, received and not yet delivered.
    private func stateWithOneItemReceived() -> DurableState {
        var state = DurableState()
        state.undelivered = [InboxItem(seq: 1, channel: .userInfo, channelSeq: 1, payload: [1], flags: [], receivedAt: 0, delivered: false)]
        return state
    }

    /// Whether `actions` tell the app of item 1.
    private func toldItemOne(_ actions: [SessionAction]) -> Bool {
        actions.contains { if case .notify(.userInfoReceived(seq: 1, _, _)) = $0 { true } else { false } }
    }

    /// An item handed to the app in a turn whose commit failed was not told to it: it is
    /// handed again once the committed state is restored, so that the app's acknowledgement
    /// never covers an item it did not see.
    func testAnItemHandedInAFailedTurnIsHandedAgainAfterTheRestore() throws {
        let session = peer.session
        let state = stateWithOneItemReceived()
        session.restore(state)
        // An installed app: the item waits for its process rather than go to the daemon.
        committer.perform(session.handle(.setAppInstalled(true), token: RequestToken(1), now: 0), from: peer)
        committer.perform(session.handle(.activate, token: RequestToken(1), now: 0), from: peer)
        committer.endOfTurn()
        XCTAssertFalse(toldItemOne(executed))
        committer.perform([.persist(.setApplicationContext([9]))], from: peer)
        committer.perform(session.handle(.attachApp(.foreground, .all), token: RequestToken(2), now: 0), from: peer)
        committer.failTurn(WriteFailed(), of: peer)
        committer.endOfTurn()
        XCTAssertFalse(toldItemOne(executed), "what only holds once the store commits is not told after a failed commit")
        session.restore(state)
        XCTAssertTrue(toldItemOne(session.handle(.outstandingTransfers, token: RequestToken(3), now: 0)), "handed again after the restore")
    }

    /// The same where the daemon plays the app: the delivery it committed in the failed turn
    /// is rolled back with it, and the item is delivered again after the restore.
    func testAnItemTheDaemonDeliveredInAFailedTurnIsDeliveredAgainAfterTheRestore() throws {
        let session = peer.session
        let state = stateWithOneItemReceived()
        session.restore(state)
        committer.perform(session.handle(.activate, token: RequestToken(1), now: 0), from: peer)
        committer.failTurn(WriteFailed(), of: peer)
        committer.endOfTurn()
        XCTAssertFalse(toldItemOne(executed), "what only holds once the store commits is not told after a failed commit")
        session.restore(state)
        XCTAssertTrue(toldItemOne(session.handle(.outstandingTransfers, token: RequestToken(3), now: 0)), "delivered again after the restore")
    }
}

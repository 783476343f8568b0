import LinkControl
@testable import LinkDaemon
import LinkJSON
import LinkRuntime
@testable import LinkSession
@testable import PowerAuthSync
import WireProtocol
import XCTest

/// The SDK's session manager rules without a daemon: a fake session records what the manager
/// submits and answers as the test says.
final class PowerAuthSessionManagerTests: XCTestCase {
    private final class FakeSession {
        var status = SessionStatus(
            role: .phone, activationState: .activated, isReachable: true, appState: .foreground,
            flags: [.isPaired, .isWatchAppInstalled], linkConnected: true, peerState: nil,
            hasContentPending: false, pendingMessages: 0, awaitingManualReplies: 0,
            outstandingUserInfoTransfers: 0)
        var submitted: [(SessionCommand, (Result<CommandResult, SessionError>) -> Void)] = []
        var events: [(String, JSONObject)] = []
        var commands: [SessionCommand] { submitted.map(\.0) }
    }

    private var session = FakeSession()
    private var loop: EventLoop!

    override func setUpWithError() throws {
        loop = try EventLoop()
    }

    private func manager() -> PowerAuthSessionManager {
        let session = self.session
        let context = FeatureContext(
            role: session.status.role, loop: loop, logger: Logger(label: "test", level: .error),
            home: "/nonexistent", stateDirectory: "/nonexistent", options: [:],
            publish: { session.events.append(($0, $1)) }, hasEventSubscribers: { true },
            submit: { session.submitted.append(($0, $1)) },
            status: { session.status })
        return PowerAuthSessionManager(context: context)
    }

    private let packet = PowerAuthPacket.activationStatus("put_session", activationId: "ACT", target: "session:main")

    func testLazyIsNotIssuedWithoutAValidSession() {
        session.status.flags = [.isPaired]
        XCTAssertFalse(manager().sendLazily(packet), "the watch app is not installed")
        session.status.flags = [.isPaired, .isWatchAppInstalled]
        session.status.activationState = .inactive
        XCTAssertFalse(manager().sendLazily(packet), "not activated")
        XCTAssertTrue(session.submitted.isEmpty)
    }

    func testLazyGoesAsAMessageWhileReachableAndFallsBackToUserInfo() throws {
        let manager = manager()
        XCTAssertTrue(manager.sendLazily(packet))
        guard case .sendMessage(.data(let sent), false, nil)? = session.commands.first, session.commands.count == 1 else {
            return XCTFail("\(session.commands)")
        }
        XCTAssertEqual(sent, packet.encoded())
        session.submitted[0].1(.failure(.wc(.notReachable, "gone")))
        XCTAssertEqual(session.commands.count, 2)
        guard case .transferUserInfo(let userInfo) = session.commands[1] else { return XCTFail("\(session.commands[1])") }
        XCTAssertEqual(PowerAuthPacket.packetBytes(inUserInfo: userInfo), packet.encoded())
    }

    func testLazyDoesNotFallBackOnSessionErrors() {
        for code in [WCErrorCode.sessionNotSupported, .sessionNotActivated, .deviceNotPaired, .watchAppNotInstalled] {
            session = FakeSession()
            let manager = manager()
            XCTAssertTrue(manager.sendLazily(packet))
            session.submitted[0].1(.failure(.wc(code, "no")))
            XCTAssertEqual(session.commands.count, 1, "\(code): no userInfo after this error")
        }
    }

    func testLazyWhileUnreachableIsAUserInfo() {
        session.status.isReachable = false
        XCTAssertTrue(manager().sendLazily(packet))
        guard case .transferUserInfo = session.commands.first else { return XCTFail("\(session.commands)") }
    }

    func testCompletionNeedsReachabilityAndDecodesTheAnswer() {
        session.status.isReachable = false
        var result: Result<PowerAuthPacket, ControlError>?
        manager().send(packet, expecting: .success) { result = $0 }
        guard case .failure(let error)? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(error.code, 15)
        XCTAssertEqual(error.message, "PA2WCSessionManager: The counterpart device is not reachable.")

        session.status.isReachable = true
        let manager = manager()
        manager.send(packet, expecting: .success) { result = $0 }
        guard case .sendMessage(.data(let sent), true, nil)? = session.commands.first, session.commands.count == 1 else {
            return XCTFail("\(session.commands)")
        }
        XCTAssertEqual(sent, packet.encoded())
        session.submitted[0].1(.success(.reply(.data(PowerAuthPacket.success().encoded()))))
        guard case .success(let answer)? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(answer.successCode, 1)

        manager.send(packet, expecting: .success) { result = $0 }
        session.submitted[1].1(.success(.reply(.data(PowerAuthPacket.failure(PowerAuthError(code: 6, message: "gone")).encoded()))))
        guard case .failure(let refused)? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(refused.code, 6, "the error packet the other side answered")

        manager.send(packet, expecting: .success) { result = $0 }
        session.submitted[2].1(.success(.reply(.data(Array("not a packet at all".utf8)))))
        guard case .failure(let unknown)? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(unknown.message, "PA2WCSessionManager: Received response is in unknown data format.")

        manager.send(packet, expecting: .success) { result = $0 }
        session.submitted[3].1(.failure(.wc(.messageReplyTimedOut, "late")))
        guard case .failure(let timedOut)? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(timedOut.domain, "WCErrorDomain")
        XCTAssertEqual(timedOut.code, 7012)
    }

    func testReceivedPacketsThatCannotBeServed() throws {
        let manager = manager()
        manager.processMessage(Array("hello".utf8), replyId: 1)
        XCTAssertEqual(session.events.map(\.0), ["pa.messageDropped"])
        XCTAssertEqual(session.events[0].1["reason"], "notAPacket")
        XCTAssertTrue(session.submitted.isEmpty, "not ours: the app answers it, not PowerAuth")

        manager.processMessage(Array("PAwc1{\"no\":\"target here\"}".utf8), replyId: 2)
        XCTAssertEqual(session.events.last?.1["reason"], "brokenPacket")
        try assertErrorReply(session.commands.last, replyId: 2, message: "PA2WCSessionManager: Wrong packet received.")

        manager.processMessage(PowerAuthPacket.activationStatus("get_session", target: "*").encoded(), replyId: 3)
        XCTAssertEqual(session.events.last?.1["reason"], "responseTarget")
        try assertErrorReply(session.commands.last, replyId: 3, message: "PA2WCSessionManager: Requests with reponse target are not allowed.")

        manager.processMessage(PowerAuthPacket.activationStatus("get_session", target: "session:main").encoded(), replyId: 4)
        XCTAssertEqual(session.events.last?.1["reason"], "noHandler")
        XCTAssertEqual(session.events.last?.1["count"], 4)
        XCTAssertEqual(manager.droppedCount, 4)
        try assertErrorReply(session.commands.last, replyId: 4, message: "PA2WCSessionManager: Unable to handle request for target 'session:main'.")

        manager.processMessage(PowerAuthPacket.activationStatus("get_session", target: "session:main").encoded(), replyId: nil)
        XCTAssertEqual(session.commands.count, 3, "without a reply handler nothing is answered")
    }

    private func assertErrorReply(
        _ command: SessionCommand?, replyId: UInt64, message: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        guard case .reply(let id, .data(let bytes))? = command else { return XCTFail("\(String(describing: command))", file: file, line: line) }
        XCTAssertEqual(id, replyId, file: file, line: line)
        guard case .packet(let answer) = PowerAuthPacket.decode(bytes) else { return XCTFail("not a packet", file: file, line: line) }
        XCTAssertEqual(answer.target, "*", file: file, line: line)
        XCTAssertEqual(answer.error, PowerAuthError(code: 15, message: message), file: file, line: line)
    }
}

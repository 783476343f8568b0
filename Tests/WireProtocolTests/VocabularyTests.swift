import WireProtocol
import XCTest

final class VocabularyTests: XCTestCase {
    func testWCErrorCodes() {
        XCTAssertEqual(WCErrorCode.allCases.map(\.rawValue), Array(7001...7019))
        XCTAssertEqual(WCErrorCode.domain, "WCErrorDomain")
        XCTAssertEqual(WCErrorCode.notReachable.name, "notReachable")
        XCTAssertEqual(WCErrorCode.payloadTooLarge.rawValue, 7009)
        XCTAssertEqual(WCErrorCode.watchOnlyApp.name, "watchOnlyApp")
        for code in WCErrorCode.allCases {
            XCTAssertEqual(WCErrorCode(name: code.name), code)
        }
        XCTAssertNil(WCErrorCode(name: "noSuchError"))
    }

    func testStates() {
        XCTAssertEqual(ActivationState.allCases.map(\.name), ["notActivated", "inactive", "activated"])
        XCTAssertEqual(ActivationState.allCases.map(\.rawValue), [0, 1, 2])
        XCTAssertEqual(AppState.allCases.map(\.name), ["notRunning", "background", "foreground"])
        XCTAssertEqual(AppState(name: "background"), .background)
        XCTAssertNil(AppState(name: "suspended"))
        XCTAssertEqual(ActivationState(name: "activated"), .activated)
    }

    func testDeviceFlagBits() {
        XCTAssertEqual(DeviceFlags.isPaired.rawValue, 1)
        XCTAssertEqual(DeviceFlags.isWatchAppInstalled.rawValue, 2)
        XCTAssertEqual(DeviceFlags.isComplicationEnabled.rawValue, 4)
        XCTAssertEqual(DeviceFlags.isCompanionAppInstalled.rawValue, 8)
        XCTAssertEqual(DeviceFlags.all.rawValue, 0x1F)
    }

    func testRoles() {
        XCTAssertEqual(Role.phone.rawValue, 1)
        XCTAssertEqual(Role.watch.rawValue, 2)
        XCTAssertEqual(Role.phone.counterpart, .watch)
        XCTAssertEqual(Role(name: "watch"), .watch)
    }

    func testGoAwayCodes() {
        XCTAssertEqual(GoAwayCode.allCases.map(\.rawValue), Array(1...11))
        XCTAssertEqual(GoAwayCode.linkDisabled.name, "linkDisabled")
        XCTAssertEqual(GoAwayCode.name(ofRawValue: 5), "authenticationFailed")
    }

    func testFrameTypes() {
        XCTAssertEqual(
            FrameType.allCases.map(\.rawValue),
            [0x01, 0x02, 0x03, 0x10, 0x20, 0x21, 0x22, 0x23, 0x30, 0x31, 0x3F, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x50, 0x51])
        XCTAssertEqual(FrameType.clockSet.name, "CLOCK_SET")
        XCTAssertEqual(FrameType.clockAck.name, "CLOCK_ACK")
        XCTAssertEqual(Frame.clockAck(round: 1, nextTimerInMilliseconds: nil).type, .clockAck)
        XCTAssertEqual(FrameType.item.name, "ITEM")
        XCTAssertEqual(FrameType.ack.name, "ACK")
        XCTAssertEqual(FrameType.fileChunk.name, "FILE_CHUNK")
        XCTAssertEqual(FrameType.fileChunkAck.name, "FILE_CHUNK_ACK")
        XCTAssertEqual(FrameType.fileCancel.name, "FILE_CANCEL")
        XCTAssertEqual(Frame.fileCancel(seq: 1).type, .fileCancel)
        XCTAssertEqual(FrameType.itemError.name, "ITEM_ERROR")
        XCTAssertEqual(Frame.itemError(channel: 1, seq: 1, code: 7015, description: "").type, .itemError)
        XCTAssertEqual(FrameType.allCases.filter(\.isAllowedBeforeHandshake), [.hello, .auth, .ready, .goAway])
        XCTAssertEqual(Frame.messageError(id: 1, code: 7001, description: "").type, .messageError)
        XCTAssertEqual(Frame.item(channel: 1, seq: 1, flags: 0, payload: []).type, .item)
        XCTAssertEqual(Frame.ack(channel: 1, seq: 1).type, .ack)
    }

    func testVersionNegotiation() {
        XCTAssertEqual(LinkProtocol.negotiateVersion(ownMin: 1, ownMax: 1, peerMin: 1, peerMax: 1), 1)
        XCTAssertEqual(LinkProtocol.negotiateVersion(ownMin: 1, ownMax: 3, peerMin: 2, peerMax: 5), 3)
        XCTAssertEqual(LinkProtocol.negotiateVersion(ownMin: 2, ownMax: 5, peerMin: 1, peerMax: 3), 3)
        XCTAssertNil(LinkProtocol.negotiateVersion(ownMin: 1, ownMax: 1, peerMin: 2, peerMax: 3))
        XCTAssertNil(LinkProtocol.negotiateVersion(ownMin: 4, ownMax: 6, peerMin: 1, peerMax: 3))
        XCTAssertEqual(LinkProtocol.negotiateVersion(peerMin: 1, peerMax: 9), 2, "this release speaks 1...2")
        XCTAssertEqual(LinkProtocol.negotiateVersion(peerMin: 1, peerMax: 1), 1, "a watch of version 1 still links")
        XCTAssertEqual(LinkProtocol.clockVersion, 2)
    }

    func testMessagePayload() {
        XCTAssertTrue(MessagePayload.data([1]).isData)
        XCTAssertFalse(MessagePayload.dictionary([1]).isData)
        XCTAssertEqual(MessagePayload.dictionary([1, 2]).bytes, [1, 2])
    }
}

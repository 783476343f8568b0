import LinkSession
import WatchConnectivity
import WatchLinkClient
import WireProtocol
import XCTest

/// The app side names what the daemons name without linking them (an app does not carry the
/// daemon's code): these lists must stay the daemons' lists.
final class MirroredVocabularyTests: XCTestCase {
    func testWCErrorCodesAreTheDaemonsCodesWithTheirNames() {
        XCTAssertEqual(WCError.Code.allCases.map(\.rawValue), WCErrorCode.allCases.map(\.rawValue))
        XCTAssertEqual(WCError.Code.allCases.map { "\($0)" }, WCErrorCode.allCases.map(\.name))
    }

    func testTheClientsStateNamesAreTheDaemons() {
        XCTAssertEqual(WatchLinkActivationState.allCases.map(\.rawValue), ActivationState.allCases.map(\.name))
        XCTAssertEqual(Set(WatchLinkAppState.allCases.map(\.rawValue)), Set(AppState.allCases.map(\.name)))
        XCTAssertEqual(WatchLinkReplyMode.allCases.map(\.rawValue), ReplyMode.allCases.map(\.rawValue))
    }
}

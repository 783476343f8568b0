import Foundation
import WatchConnectivity
import XCTest

/// Every `WCErrorCode`'s texts as the framework gives them: its `Localizable.strings` in English
/// (keys `Err7001` ... `Err7019`, `-C` the failure reason, `-R` the recovery suggestion), as
/// Johennes/swift-systemstrings (`Sources/SystemStrings/WatchConnectivityStrings.swift`) lists
/// them; device logs quote 7007 and 7012 the same ("WatchConnectivity session on paired device is
/// not reachable.", "Message reply took too long."). Every code has a description there.
final class ErrorTextTests: XCTestCase {
    private let expected: [WCError.Code: (String, String?, String?)] = [
        .genericError: ("Unknown WatchConnectivity error.", nil, nil),
        .sessionNotSupported: (
            "WatchConnectivity session is not available on this device.", "Device does not support pairing to a Watch.",
            "Check if WatchConnectivity session is supported prior to use."
        ),
        .sessionMissingDelegate: ("WatchConnectivity session has no delegate.", "Delegate is nil.", "Set a delegate."),
        .sessionNotActivated: (
            "WatchConnectivity session has not been activated.", "Function activateSession has not been called.",
            "Activate the WatchConnectivity session."
        ),
        .deviceNotPaired: ("Device is not paired.", nil, "Pair the device with a Watch."),
        .watchAppNotInstalled: ("Watch app is not installed.", nil, "Install the Watch app."),
        .notReachable: ("WatchConnectivity session on paired device is not reachable.", nil, nil),
        .invalidParameter: ("Invalid parameter passed to WatchConnectivity API.", nil, "Only pass parameters of correct type."),
        .payloadTooLarge: ("Payload is too large.", nil, "Send smaller payloads."),
        .payloadUnsupportedTypes: ("Payload contains unsupported type.", nil, "Only pass valid types."),
        .messageReplyFailed: ("Message reply failed.", nil, nil),
        .messageReplyTimedOut: ("Message reply took too long.", "Reply timeout occurred.", nil),
        .fileAccessDenied: (
            "WatchConnectivity session cannot access the file.", "Invalid file path, or insufficient permissions to access the file.",
            "Verify the file path is accessible."
        ),
        .deliveryFailed: ("Payload could not be delivered.", nil, nil),
        .insufficientSpace: (
            "The payload could not be sent because there isn\u{2019}t enough space.", "There is not enough space on the receiving side.",
            "Clear up some space on the receiving side, and try again."
        ),
        .sessionInactive: (
            "WatchConnectivity session is inactive.", "WatchConnectivity session is still transitioning to deactivated.",
            "Wait for the WatchConnectivity session to complete transition to deactivated."
        ),
        .transferTimedOut: ("Transfer timed out.", nil, nil),
        .companionAppNotInstalled: ("Companion app is not installed.", nil, "Install the Companion app."),
        .watchOnlyApp: ("Watch app doesn't have a Companion app.", nil, "Create a Companion app for this Watch app."),
    ]

    func testEveryCodeHasTheFrameworksTexts() {
        XCTAssertEqual(Set(expected.keys), Set(WCError.Code.allCases))
        for code in WCError.Code.allCases {
            let error = WCError(code) as NSError
            let (description, reason, suggestion) = expected[code]!
            XCTAssertEqual(error.domain, "WCErrorDomain")
            XCTAssertEqual(error.code, code.rawValue)
            XCTAssertEqual(error.localizedDescription, description, "\(code)")
            XCTAssertEqual(error.localizedFailureReason, reason, "\(code)")
            XCTAssertEqual(error.localizedRecoverySuggestion, suggestion, "\(code)")
            XCTAssertNil(error.userInfo[WCError.watchLinkExplanationKey])
        }
    }

    /// WatchLink's explanation is beside the device's text, never in its place.
    func testWatchLinksExplanationIsAUserInfoKeyOfItsOwn() {
        let error = WCError(.notReachable, userInfo: [WCError.watchLinkExplanationKey: "the watch app is background, not in the foreground"])
        XCTAssertEqual(error.localizedDescription, "WatchConnectivity session on paired device is not reachable.")
        XCTAssertEqual((error as NSError).userInfo[WCError.watchLinkExplanationKey] as? String, "the watch app is background, not in the foreground")
        XCTAssertEqual(error.explanation, "the watch app is background, not in the foreground")
        XCTAssertTrue(
            error.description.hasPrefix("Error Domain=WCErrorDomain Code=7007 \"WatchConnectivity session on paired device is not reachable.\""),
            error.description)
        let given = WCError(.genericError, userInfo: [NSLocalizedDescriptionKey: "an app's own words"])
        XCTAssertEqual(given.localizedDescription, "an app's own words", "an app that makes its own error keeps its text")
    }
}

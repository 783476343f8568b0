import Foundation
import LinkJSON
import WatchLinkTesting
import XCTest

/// Each WatchConnectivity error a real app process meets, with the texts a device gives it:
/// WatchConnectivity's own `Localizable.strings` in English (`Err70xx`, `-C` the failure
/// reason, `-R` the recovery suggestion), as Johennes/swift-systemstrings lists them from the
/// framework (`Sources/SystemStrings/WatchConnectivityStrings.swift`); device logs in issue
/// trackers quote 7007 ("WatchConnectivity session on paired device is not reachable.") and
/// 7012 ("Message reply took too long.") the same. 7004, 7007, 7012 and 7014 are in
/// `AppSideTests.testMessagesRepliesAndTheirErrors`; every code's texts in `ErrorTextTests`
/// (with 7001, 7008, 7011, 7015 and 7016, whose codes the daemon's tests provoke).
final class ErrorTextsTests: AppSideTestCase {
    /// The framework's texts: description, failure reason, recovery suggestion.
    private let device: [Int: [String?]] = [
        7002: [
            "WatchConnectivity session is not available on this device.", "Device does not support pairing to a Watch.",
            "Check if WatchConnectivity session is supported prior to use.",
        ],
        7003: ["WatchConnectivity session has no delegate.", "Delegate is nil.", "Set a delegate."],
        7005: ["Device is not paired.", nil, "Pair the device with a Watch."],
        7006: ["Watch app is not installed.", nil, "Install the Watch app."],
        7009: ["Payload is too large.", nil, "Send smaller payloads."],
        7010: ["Payload contains unsupported type.", nil, "Only pass valid types."],
        7013: [
            "WatchConnectivity session cannot access the file.", "Invalid file path, or insufficient permissions to access the file.",
            "Verify the file path is accessible.",
        ],
        7017: ["Transfer timed out.", nil, nil],
        7018: ["Companion app is not installed.", nil, "Install the Companion app."],
        7019: ["Watch app doesn't have a Companion app.", nil, "Create a Companion app for this Watch app."],
    ]

    private func texts(_ line: [String: Any]) -> [String?] {
        [line["description"] as? String, line["reason"] as? String, line["suggestion"] as? String]
    }

    /// Asserts that `line` is error `code` with the device's texts and WatchLink's explanation.
    private func assertDeviceTexts(_ line: [String: Any]?, _ code: Int, file: StaticString = #filePath, line number: UInt = #line) {
        guard let line else { return XCTFail("no error line", file: file, line: number) }
        XCTAssertEqual(line["code"] as? Int, code, "\(line)", file: file, line: number)
        XCTAssertEqual(texts(line), device[code], "\(code)", file: file, line: number)
        XCTAssertFalse((line["explanation"] as? String ?? "").isEmpty, "WatchLink's words beside them: \(line)", file: file, line: number)
    }

    private func lastError(_ app: AppProcess, _ name: String, count: Int) throws -> [String: Any]? {
        try app.waitFor(name, count: count).last
    }

    func testThePhoneAppsErrorsHaveTheDevicesTexts() throws {
        let pair = try startWatchLinkPair()
        let phone = try launchActivated("phone-app", on: pair.phone, of: pair)
        _ = try launchActivated("watch-app", on: pair.watch, of: pair)

        phone.send(["cmd": "sendMessage", "message": ["big": String(repeating: "x", count: 70_000)]])
        assertDeviceTexts(try lastError(phone, "errorHandler", count: 1), 7009)
        phone.send(["cmd": "sendMessage", "message": ["nothing": NSNull()]])
        assertDeviceTexts(try lastError(phone, "errorHandler", count: 2), 7010)

        phone.send(["cmd": "transferFile", "path": pair.phone.home + "/no-such-file"])
        assertDeviceTexts(try phone.waitFor("didFinishFile")[0]["errorTexts"] as? [String: Any], 7013)

        _ = try control(pair.phone, "link.set", ["up": false])
        phone.send(["cmd": "transferUserInfo", "userInfo": ["n": 1]])
        let deadline = Date().addingTimeInterval(10)
        var queued: String?
        while queued == nil, Date() < deadline {
            queued = try control(pair.phone, "userInfo.outstanding")["transfers"]?.arrayValue?.first?["transferId"]?.stringValue
            if queued == nil { usleep(10_000) }
        }
        _ = try control(pair.phone, "transfer.timeOut", ["transferId": .string(try XCTUnwrap(queued))])
        assertDeviceTexts(try phone.waitFor("didFinishUserInfo")[0]["errorTexts"] as? [String: Any], 7017)
        _ = try control(pair.phone, "link.set", ["up": true])

        _ = try control(pair.phone, "device.set", ["isWatchAppInstalled": false])
        phone.send(["cmd": "updateApplicationContext", "context": ["n": 1]])
        assertDeviceTexts(try lastError(phone, "contextError", count: 1), 7006)
        _ = try control(pair.phone, "device.set", ["isPaired": false, "isWatchAppInstalled": true])
        phone.send(["cmd": "sendMessage", "message": ["n": 2]])
        assertDeviceTexts(try lastError(phone, "errorHandler", count: 3), 7005)
        _ = try control(pair.phone, "device.set", ["isPaired": true])

        phone.send(["cmd": "dropDelegate"])
        try phone.waitFor("delegateDropped")
        phone.send(["cmd": "updateApplicationContext", "context": ["n": 3]])
        assertDeviceTexts(try lastError(phone, "contextError", count: 2), 7003)
    }

    func testTheWatchAppsErrorsHaveTheDevicesTexts() throws {
        let pair = try startWatchLinkPair()
        _ = try launchActivated("phone-app", on: pair.phone, of: pair)
        let watch = try launchActivated("watch-app", on: pair.watch, of: pair)

        watch.send(["cmd": "transferCurrentComplicationUserInfo", "userInfo": ["n": 1]])
        assertDeviceTexts(try watch.waitFor("didFinishUserInfo")[0]["errorTexts"] as? [String: Any], 7002)
        _ = try control(pair.watch, "device.set", ["isCompanionAppInstalled": false])
        watch.send(["cmd": "sendMessage", "message": ["n": 1]])
        assertDeviceTexts(try lastError(watch, "errorHandler", count: 1), 7018)
        _ = try control(pair.watch, "device.set", ["isCompanionAppInstalled": true, "isWatchOnlyApp": true])
        watch.send(["cmd": "sendMessage", "message": ["n": 2]])
        assertDeviceTexts(try lastError(watch, "errorHandler", count: 2), 7019)
    }
}

import Foundation
import LinkJSON
import TestSupport
import WatchLinkTesting
import XCTest

/// The watch app's two connections read in the worst order: the example watch app
/// (`Examples/BackgroundWatchApp`, completing its tasks as Apple's sample "Transferring data with
/// Watch Connectivity" does: once the session is activated and `hasContentPending` is false, at
/// the end of `handle(_:)` too) against a fake watchd that hands
/// the task on WatchKit's connection and writes the data it is for to the session's connection
/// only later, as a session that reads its connection late would see it.
final class WatchKitTaskOrderTests: XCTestCase {
    private var server: FakeControlServer!
    private let children = ChildProcesses()
    private var app: ChildProcess?

    private static let watchStatus: JSONObject = [
        "role": "watch", "activationState": "activated", "isReachable": false, "appState": "background",
        "hasContentPending": false, "isCompanionAppInstalled": true, "outstandingUserInfoTransfers": 0, "outstandingFileTransfers": 0,
    ]

    override func setUpWithError() throws {
        server = try FakeControlServer(socketName: "watch.ctl")
    }

    override func tearDown() {
        let reports = app.map { ProgramOutput.sanitizerReports($0.standardError) } ?? []
        if !reports.isEmpty { XCTFail("the example had sanitizer reports: \(reports.prefix(3).joined(separator: " | "))") }
        children.killAll()
        server.stop()
    }

    /// The texts of the example's lines, in order.
    private func lines(_ app: ChildProcess) -> [String] {
        ProgramOutput.exampleLines(app.standardOutput).map(\.text)
    }

    private func waitForLine(_ app: ChildProcess, _ text: String, timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !lines(app).contains(text) {
            guard Date() < deadline, app.isRunning else {
                throw FakeControlServer.Failure(description: "no '\(text)' from the example: \(lines(app)) \(app.standardError)")
            }
            usleep(5_000)
        }
    }

    /// The sample completes its tasks at "the end of the handle method. This happens when
    /// hasContentPending flips to false before the app retains the tasks": on a watch the data
    /// that triggered a `WKWatchConnectivityRefreshBackgroundTask` is the session's by then
    /// (`hasContentPending`: "true if the session has received data in the background but has not
    /// yet delivered that data to the session's delegate"), so the task is completed only once
    /// the delegate has it. Events of WatchKit's connection that come meanwhile (here the
    /// user opening the app) reach the app after `handle(_:)`, in order.
    func testTheTaskIsHandedOnceTheSessionHasTheDataWrittenBeforeIt() throws {
        let app = children.make(
            DaemonBinaries.path("WatchLinkExampleBackgroundWatch"), [],
            environment: ["WATCHLINK_CONTROL": server.socketPath, "LSAN_OPTIONS": "detect_leaks=0"])
        self.app = app
        try app.start()

        // The delegate's initializer activates the session, then WatchKit attaches.
        let session = try server.accept()
        session.respond(
            to: try session.expect("app.attach"),
            ["attached": true, "appState": "background", "activationState": "notActivated", "isReachable": false])
        let watchKit = try server.accept()
        watchKit.respond(to: try watchKit.expect("watchKit.attach"), ["attached": true, "appState": "background"])
        session.respond(to: try session.expect("session.activate"), ["activationState": "activated"])
        session.respond(to: try session.expect("status"), Self.watchStatus)
        session.respond(to: try session.expect("context.get"), ["applicationContext": [:], "receivedApplicationContext": [:]])
        try waitForLine(app, "activated, hasContentPending false")

        let task: JSONObject = ["taskId": 1, "kind": "watchConnectivity", "state": "handed"]
        watchKit.event("backgroundTask.handed", ["tasks": [.object(task)]])
        watchKit.event("app.stateDidChange", ["appState": "foreground"])
        // WatchKit asks the session's connection before it hands the task over; the data the
        // task is for reaches the session before the answer.
        guard let barrier = try? session.nextRequest(timeout: 5) else {
            let completed = (try? watchKit.nextRequest(timeout: 0.1)).map(\.op) ?? "nothing"
            return XCTFail("the session's connection was not asked before the task was handed; WatchKit sent \(completed); the example: \(lines(app))")
        }
        XCTAssertEqual(barrier.op, "status", "\(barrier); the example: \(lines(app))")
        XCTAssertFalse(lines(app).contains("task watchConnectivity"), "handed only after the session's answer: \(lines(app))")
        XCTAssertFalse(lines(app).contains("active"), "WatchKit's later events wait for the tasks: \(lines(app))")
        session.event("userInfo.received", ["seq": 1, "userInfo": ["n": 1], "isCurrentComplicationInfo": false])
        session.respond(to: barrier, Self.watchStatus)

        XCTAssertEqual(try session.expect("app.acknowledge").args, ["seq": 1])
        XCTAssertEqual(try watchKit.expect("backgroundTask.complete").args, ["taskId": 1, "snapshot": false])
        try waitForLine(app, "completed 1 task(s)")
        let texts = lines(app)
        for order in [
            ["task watchConnectivity", "active"],
            ["userInfo n=1", "hasContentPending false", "completed 1 task(s)"],
        ] {
            let positions = order.map { texts.firstIndex(of: $0) }
            XCTAssertFalse(positions.contains(nil), "\(texts)")
            XCTAssertEqual(positions.compactMap { $0 }, positions.compactMap { $0 }.sorted(), "in this order: \(texts)")
        }
        XCTAssertEqual(texts.filter { $0 == "completed 1 task(s)" }.count, 1, "\(texts)")
    }
}

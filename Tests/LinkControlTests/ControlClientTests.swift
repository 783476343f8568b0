import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import LinkControl
@testable import LinkClient
import LinkJSON

final class ControlClientTests: XCTestCase {
    private var server: TestControlServer!
    private var descriptorsBefore: Int?

    override func setUpWithError() throws {
        descriptorsBefore = openDescriptorCount()
        server = try TestControlServer()
    }

    override func tearDown() {
        server.stop()
        let directory = server.directory
        server = nil
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory))
        if let before = descriptorsBefore {
            XCTAssertTrue(waitUntil(5) { openDescriptorCount() == before }, "descriptors leaked: \(before) before, \(openDescriptorCount() ?? -1) after")
        }
    }

    func testCallReturnsResult() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        XCTAssertEqual(try client.call("echo", ["x": [1, "two"]]), ["op": "echo", "args": ["x": [1, "two"]]])
        XCTAssertEqual(try client.call("echo"), ["op": "echo", "args": [:]])
    }

    func testErrorResponsesThrowControlError() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        XCTAssertThrowsError(try client.call("fail")) { error in
            XCTAssertEqual(
                error as? ControlError,
                ControlError(domain: "WCErrorDomain", code: 7007, name: "notReachable", message: "counterpart not reachable"))
        }
        XCTAssertThrowsError(try client.call("nope")) { error in
            XCTAssertEqual((error as? ControlError)?.name, "unknownOp")
        }
        XCTAssertEqual(try client.call("echo")["op"], "echo")
    }

    func testConcurrentCallsFromSeveralThreadsGetTheirOwnResponses() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        let threads = 8
        let callsPerThread = 25
        let group = DispatchGroup()
        let mismatches = LockedBox<[String]>([])
        let completed = LockedBox(0)
        for thread in 0..<threads {
            group.enter()
            Thread {
                defer { group.leave() }
                for call in 0..<callsPerThread {
                    let tag = "\(thread)-\(call)"
                    do {
                        let result = try client.call("sleep", ["ms": .int(Int64((thread * 7 + call * 3) % 5)), "tag": .string(tag)])
                        if result["tag"] != .string(tag) { mismatches.modify { $0.append("\(tag) got \(result)") } }
                        completed.modify { $0 += 1 }
                    } catch {
                        mismatches.modify { $0.append("\(tag) threw \(error)") }
                    }
                }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(mismatches.value, [])
        XCTAssertEqual(completed.value, threads * callsPerThread)
        XCTAssertEqual(server.receivedOps.value.count, threads * callsPerThread)
    }

    func testResponsesArriveOutOfOrder() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        let slowDone = DispatchSemaphore(value: 0)
        let slowResult = LockedBox<JSONObject?>(nil)
        Thread {
            slowResult.value = try? client.call("sleep", ["ms": 400, "tag": "slow"])
            slowDone.signal()
        }.start()
        XCTAssertTrue(waitUntil(5) { self.server.receivedOps.value == ["sleep"] })
        let fast = try client.call("sleep", ["ms": 0, "tag": "fast"])
        XCTAssertEqual(fast["tag"], "fast")
        XCTAssertEqual(slowDone.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(slowResult.value?["tag"], "slow")
    }

    func testEventsAreDelivered() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        try client.subscribe()
        _ = try client.call("emit", ["name": "test.ping", "count": 3])
        for sequence in 0..<3 {
            let event = try XCTUnwrap(client.nextEvent(timeoutSeconds: 5))
            XCTAssertEqual(event.name, "test.ping")
            XCTAssertEqual(event.data, ["sequence": .int(Int64(sequence))])
            XCTAssertNotNil(event.date)
        }
        _ = try client.call("emit", ["name": "test.barrier", "count": 1])
        XCTAssertEqual(try client.nextEvent(timeoutSeconds: 5)?.name, "test.barrier", "no event beyond the three, in order before the barrier")

        server.broadcast("session.reachabilityDidChange", ["isReachable": false])
        server.broadcast("session.reachabilityDidChange", ["isReachable": true])
        let reachable = try client.waitForEvent("session.reachabilityDidChange", timeoutSeconds: 5) { $0.data["isReachable"] == true }
        XCTAssertEqual(reachable.data, ["isReachable": true])

        _ = try client.call("emit", ["name": "other", "count": 2])
        XCTAssertThrowsError(try client.waitForEvent("never.sent", timeoutSeconds: 0.1)) { error in
            XCTAssertEqual(error as? ControlClientError, .timedOut("no event 'never.sent' within 0.1 s"))
        }
    }

    func testEventsInterleavedWithConcurrentCalls() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        try client.subscribe()
        let group = DispatchGroup()
        for thread in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                for _ in 0..<10 {
                    _ = try? client.call("emit", ["name": .string("t\(thread)"), "count": 2])
                }
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        var counts: [String: Int] = [:]
        while let event = try client.nextEvent(timeoutSeconds: 0.2) {
            counts[event.name, default: 0] += 1
        }
        XCTAssertEqual(counts, ["t0": 20, "t1": 20, "t2": 20, "t3": 20])
    }

    func testRawLinesGetTheirErrorResponses() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        let notJSON = try client.callRaw(line: Array("{\"id\": 1 \"op\": 2}".utf8))
        XCTAssertEqual(notJSON["id"], .null)
        XCTAssertEqual(notJSON["ok"], false)
        XCTAssertEqual(notJSON["error"]?["name"], "badRequest")
        XCTAssertEqual(notJSON["error"]?["message"]?.stringValue, "invalid JSON: expected ',' or '}' after object member at byte 9")

        let badOp = try client.callRaw(line: Array("{\"id\": 41, \"op\": 2}\n".utf8))
        XCTAssertEqual(badOp["id"], 41)
        XCTAssertEqual(badOp["error"]?["message"], "'op' must be a string, got integer")

        let fine = try client.callRaw(line: Array("{\"id\": \"mine\", \"op\": \"echo\"}".utf8))
        XCTAssertEqual(fine["result"]?["op"], "echo")
        XCTAssertEqual(try client.call("echo")["op"], "echo")
    }

    func testTimeoutThenLateResponseIsDropped() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        XCTAssertThrowsError(try client.call("sleep", ["ms": 150], timeoutSeconds: 0.02)) { error in
            XCTAssertEqual(error as? ControlClientError, .timedOut("no response to 'sleep' within 0.02 s"))
        }
        XCTAssertEqual(try client.call("sleep", ["ms": 300, "tag": "after"])["tag"], "after")
        let raw = try client.callRaw(line: Array("[]".utf8))
        XCTAssertEqual(raw["error"]?["message"], "a request must be a JSON object, got array")
    }

    func testDaemonClosingFailsCallsAndEndsEvents() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        try client.subscribe()
        server.broadcast("last.words", [:])
        XCTAssertThrowsError(try client.call("hangUp")) { error in
            XCTAssertEqual(error as? ControlClientError, .connectionClosed("the daemon closed the connection"))
        }
        XCTAssertThrowsError(try client.call("echo")) { error in
            XCTAssertEqual(error as? ControlClientError, .connectionClosed("the daemon closed the connection"))
        }
        XCTAssertEqual(try client.nextEvent(timeoutSeconds: 1)?.name, "last.words")
        XCTAssertThrowsError(try client.nextEvent(timeoutSeconds: 1)) { error in
            XCTAssertEqual(error as? ControlClientError, .connectionClosed("the daemon closed the connection"))
        }
    }

    func testInvalidResponseFailsTheConnection() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        defer { client.close() }
        XCTAssertThrowsError(try client.call("garbage")) { error in
            guard case .invalidResponse(let what)? = error as? ControlClientError else { return XCTFail("\(error)") }
            XCTAssertTrue(what.contains("this is not json"), what)
            XCTAssertTrue("\(error)".hasPrefix("invalid response from the daemon: invalid literal, expected 'true' at byte 0"), "\(error)")
        }
    }

    func testCloseFailsCallsInFlight() throws {
        let client = try ControlClient(socketPath: server.socketPath)
        let failed = DispatchSemaphore(value: 0)
        let outcome = LockedBox<Error?>(nil)
        Thread {
            do {
                _ = try client.call("sleep", ["ms": 500])
            } catch {
                outcome.value = error
            }
            failed.signal()
        }.start()
        XCTAssertTrue(waitUntil(5) { self.server.receivedOps.value == ["sleep"] })
        client.close()
        XCTAssertEqual(failed.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(outcome.value as? ControlClientError, .connectionClosed("the client was closed"))
        XCTAssertThrowsError(try client.call("echo")) {
            XCTAssertEqual($0 as? ControlClientError, .connectionClosed("the client was closed"))
        }
        client.close()
    }

    func testDroppingTheClientClosesIt() throws {
        var client: ControlClient? = try ControlClient(socketPath: server.socketPath)
        XCTAssertEqual(try client?.call("echo")["op"], "echo")
        XCTAssertEqual(server.connectionCount, 1)
        client = nil
        XCTAssertTrue(waitUntil(5) { self.server.connectionCount == 0 }, "releasing the last reference closes the socket")
    }

    func testCannotConnectErrors() throws {
        let missing = server.directory + "/watch.ctl"
        XCTAssertThrowsError(try ControlClient(socketPath: missing)) { error in
            XCTAssertEqual(error as? ControlClientError, .cannotConnect(path: missing, errno: ENOENT))
            XCTAssertEqual("\(error)", "cannot connect to \(missing): No such file or directory — is watchd running?")
        }

        let stale = server.directory + "/phone2.ctl"
        let listener = try TestControlServer.listeningSocket(at: stale)
        close(listener)
        defer { unlink(stale) }
        XCTAssertThrowsError(try ControlClient(socketPath: stale)) { error in
            XCTAssertEqual(error as? ControlClientError, .cannotConnect(path: stale, errno: ECONNREFUSED))
            XCTAssertEqual("\(error)", "cannot connect to \(stale): Connection refused — is the daemon running?")
        }

        let long = "/tmp/" + String(repeating: "d", count: 200) + "/phone.ctl"
        XCTAssertThrowsError(try ControlClient(socketPath: long)) { error in
            XCTAssertEqual(error as? ControlClientError, .socketPathTooLong(path: long, limit: ClientSocket.maximumPathLength))
            XCTAssertTrue("\(error)".hasPrefix("socket path is 215 bytes, longer than the platform limit of"), "\(error)")
        }
    }
}

/// A value shared between threads of a test.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    func modify(_ change: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change(&stored)
    }

    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); defer { lock.unlock() }; stored = newValue }
    }
}

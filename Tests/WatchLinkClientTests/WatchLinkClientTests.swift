import Foundation
import LinkJSON
import TestSupport
import WatchLinkClient
import XCTest

final class WatchLinkClientTests: XCTestCase {
    private var server: FakeControlServer!

    override func setUpWithError() throws {
        server = try FakeControlServer()
    }

    override func tearDown() {
        server.stop()
        server = nil
    }

    private func connect() throws -> (WatchLinkClient, FakeConnection) {
        let path = server.socketPath
        guard case .success(let client)? = start({ try await WatchLinkClient.connect(socketPath: path) }).wait() else {
            throw FakeControlServer.Failure(description: "cannot connect")
        }
        return (client, try server.accept())
    }

    func testRequestsGoOutInCallOrderWithIncreasingIds() throws {
        let (client, connection) = try connect()
        defer { client.close() }
        let answers = Recorder()
        for index in 0..<200 {
            client.send("op\(index)", ["index": .int(Int64(index))]) { result in
                answers.record("\(index):\((try? result.get())?["echo"]?.intValue ?? -1)")
            }
        }
        var lastId: Int64 = 0
        var requests: [FakeRequest] = []
        for index in 0..<200 {
            let request = try connection.nextRequest()
            XCTAssertEqual(request.op, "op\(index)")
            XCTAssertEqual(request.args["index"]?.intValue, Int64(index))
            let id = try XCTUnwrap(request.id.intValue)
            XCTAssertGreaterThan(id, lastId)
            lastId = id
            requests.append(request)
        }
        for request in requests.reversed() {
            connection.respond(to: request, ["echo": request.args["index"] ?? nil])
        }
        let recorded = answers.wait(for: 200)
        XCTAssertEqual(recorded, (0..<200).reversed().map { "\($0):\($0)" }, "completions run in the order the answers came")
    }

    func testAnswersOutOfOrderReachTheirCalls() throws {
        let (client, connection) = try connect()
        defer { client.close() }
        let order = Recorder()
        let slow = start { () -> JSONObject in
            defer { order.record("slow") }
            return try await client.call("slow", ["n": 1])
        }
        let slowRequest = try connection.expect("slow")
        let fast = start { () -> JSONObject in
            defer { order.record("fast") }
            return try await client.call("fast", ["n": 2])
        }
        let fastRequest = try connection.expect("fast")
        connection.respond(to: fastRequest, ["answer": "fast"])
        XCTAssertEqual(try fast.wait()?.get(), ["answer": "fast"])
        connection.respond(to: slowRequest, ["answer": "slow"])
        XCTAssertEqual(try slow.wait()?.get(), ["answer": "slow"])
        XCTAssertEqual(order.all, ["fast", "slow"])
    }

    func testErrorsAreMappedByDomain() throws {
        let (client, connection) = try connect()
        defer { client.close() }
        let calls = (0..<5).map { index in start { try await client.call("op\(index)") } }
        // The five calls run concurrently: their requests arrive in any order, and are put
        // back in the order of the calls by their ops.
        let arrived = try (0..<5).map { _ in try connection.nextRequest() }
        let requests = try (0..<5).map { index in try XCTUnwrap(arrived.first { $0.op == "op\(index)" }, "op\(index) arrived") }
        connection.fail(requests[0], code: 7007, name: "notReachable", message: "the watch is not reachable")
        connection.fail(requests[1], domain: "control", code: 2, name: "unknownOp", message: "no such op 'op1'")
        connection.fail(requests[2], domain: "PowerAuthErrorDomain", code: 6, name: "missingActivation", message: "no activation")
        connection.send(Array("{\"id\":\(requests[3].id),\"ok\":true,\"result\":[1]}\n".utf8))
        connection.send(Array("{\"id\":\(requests[4].id),\"ok\":false}\n".utf8))
        func failure(_ index: Int) -> WatchLinkError? {
            guard case .failure(let error)? = calls[index].wait() else { return nil }
            return error as? WatchLinkError
        }
        XCTAssertEqual(failure(0), .watchConnectivity(code: 7007, name: "notReachable", message: "the watch is not reachable"))
        XCTAssertEqual(failure(0)?.description, "WCErrorDomain 7007 notReachable: the watch is not reachable")
        XCTAssertEqual(failure(1), .control(code: 2, name: "unknownOp", message: "no such op 'op1'"))
        XCTAssertEqual(failure(2), .other(domain: "PowerAuthErrorDomain", code: 6, name: "missingActivation", message: "no activation"))
        guard case .invalidResponse(let text)? = failure(3) else { return XCTFail("\(String(describing: failure(3)))") }
        XCTAssertTrue(text.contains("'op3'") && text.contains("array"), text)
        guard case .invalidResponse(let missing)? = failure(4) else { return XCTFail("\(String(describing: failure(4)))") }
        XCTAssertTrue(missing.contains("'op4'") && missing.contains("'error'"), missing)
    }

    func testWaitingCallsFailWhenTheDaemonGoesAway() throws {
        let (client, connection) = try connect()
        let stream = client.events
        let failures = Recorder()
        for index in 0..<3 {
            client.send("wait\(index)") { result in
                if case .failure(.connection(let text)) = result { failures.record("\(index) \(text)") }
            }
        }
        for _ in 0..<3 { _ = try connection.nextRequest() }
        let closed = Pending<WatchLinkError>()
        client.onClose { closed.fulfil($0) }
        connection.hangUp()
        let recorded = failures.wait(for: 3)
        XCTAssertEqual(recorded.map { $0.prefix(1) }, ["0", "1", "2"], "waiting calls fail in the order they were made")
        for text in recorded {
            XCTAssertTrue(text.contains("the daemon closed the connection") && text.contains(server.socketPath), text)
        }
        XCTAssertNotNil(closed.wait())
        XCTAssertTrue(client.isClosed)
        let ended = start { () -> Int in
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        XCTAssertEqual(try ended.wait()?.get(), 0, "the event stream finishes")
        let late = start { try await client.call("late") }
        guard case .failure(let error)? = late.wait(), case .connection? = error as? WatchLinkError else {
            return XCTFail("a call after the close must fail with .connection")
        }
    }

    func testCloseFailsWaitingCallsAndTheDaemonSeesTheEnd() throws {
        let (client, connection) = try connect()
        let call = start { try await client.call("forever") }
        _ = try connection.expect("forever")
        client.close()
        guard case .failure(let error)? = call.wait() else { return XCTFail("the call must fail") }
        XCTAssertEqual(error as? WatchLinkError, .connection("the client was closed"))
        XCTAssertTrue(try connection.waitForClose())
        client.close()
    }

    func testEventsArriveInOrderInterleavedWithAnswers() throws {
        let (client, connection) = try connect()
        defer { client.close() }
        let stream = client.events
        let seen = Recorder()
        client.onEvent { event in seen.record("event \(event.data["n"]?.intValue ?? -1)") }
        let subscribed = start { try await client.subscribe() }
        let subscribe = try connection.expect("events.subscribe")
        connection.respond(to: subscribe, ["subscribed": true])
        XCTAssertNotNil(subscribed.wait())
        client.send("middle") { _ in seen.record("answer") }
        let middle = try connection.expect("middle")
        for n in 0..<50 {
            if n == 25 { connection.respond(to: middle) }
            connection.event("test.event", ["n": .int(Int64(n))])
        }
        let expected = (0..<25).map { "event \($0)" } + ["answer"] + (25..<50).map { "event \($0)" }
        XCTAssertEqual(seen.wait(for: 51), expected)
        let collected = start { () -> [Int64] in
            var numbers: [Int64] = []
            for await event in stream {
                XCTAssertEqual(event.name, "test.event")
                XCTAssertNotNil(event.date)
                numbers.append(event.data["n"]?.intValue ?? -1)
                if numbers.count == 50 { break }
            }
            return numbers
        }
        XCTAssertEqual(try collected.wait()?.get(), (0..<50).map { Int64($0) })
    }

    func testConnectFailureNamesTheSocketAndTheDaemon() throws {
        let home: String = server.directory
        let missing = home + "/watch.ctl"
        let attempt = start { try await WatchLinkClient.connect(home: home, side: .watch) }
        guard case .failure(let error)? = attempt.wait(), case .connection(let text)? = error as? WatchLinkError else {
            return XCTFail("connecting to a missing socket must fail with .connection")
        }
        XCTAssertTrue(text.contains(missing), text)
        XCTAssertTrue(text.contains("ENOENT"), text)
        XCTAssertTrue(text.contains("watchd"), text)
        let tooLong = "/tmp/" + String(repeating: "x", count: 120) + "/phone.ctl"
        let long = start { try await WatchLinkClient.connect(socketPath: tooLong) }
        guard case .failure(let longError)? = long.wait(), case .connection(let longText)? = longError as? WatchLinkError else {
            return XCTFail("an over-long path must fail with .connection")
        }
        XCTAssertTrue(longText.contains("over the limit"), longText)
    }

    func testAGarbageLineClosesTheConnectionWithAClearError() throws {
        let (client, connection) = try connect()
        let call = start { try await client.call("status") }
        _ = try connection.expect("status")
        connection.send(Array("this is not json\n".utf8))
        guard case .failure(let error)? = call.wait(), case .connection(let text)? = error as? WatchLinkError else {
            return XCTFail("a garbage line must fail the call with .connection")
        }
        XCTAssertTrue(text.contains("not JSON") && text.contains(server.socketPath), text)
    }

    func testARequestLargerThanTheSocketBufferWaitsForRoom() throws {
        let (client, connection) = try connect()
        defer { client.close() }
        let big = String(repeating: "w", count: 4 << 20)
        let written = onThread { () -> Bool in
            client.send("big", ["blob": .string(big)]) { _ in }
            return true
        }
        let request = try connection.expect("big")
        XCTAssertEqual(request.args["blob"]?.stringValue?.count, big.count)
        XCTAssertEqual(written.wait(), true)
        client.send("after") { _ in }
        _ = try connection.expect("after")
    }
}

import LinkControl
@testable import LinkDaemon
import LinkJSON
import LinkSession
import WireProtocol
import XCTest

/// A feature of the tests only, written the way docs/architecture.md ("Adding an op") says.
private final class GreetingFeature: DaemonFeature {
    private(set) var greeted: [String] = []

    var operations: [ControlOperation] {
        [
            ControlOperation("test.greet", sides: .phone, summary: "greets someone",
                      arguments: [.required("name", .string, "who"), .optional("times", .integer(1...3))]) { [unowned self] call in
                let name = try call.args.string("name")
                self.greeted.append(name)
                call.succeed(["greeting": .string(String(repeating: "hello \(name) ", count: Int(try call.args.optionalInt("times") ?? 1)))])
            },
            ControlOperation("test.fail", summary: "fails as a session would") { _ in
                throw SessionError.wc(.notReachable, "not today")
            },
            ControlOperation("test.later", summary: "answers later") { call in
                _ = call
            },
        ]
    }

    func start(_ context: FeatureContext) throws {}
}

final class OperationTableTests: XCTestCase {
    private let feature = GreetingFeature()

    private func table(_ role: Role) -> OperationTable {
        let table = OperationTable(role: role)
        table.register(feature.operations)
        return table
    }

    /// Dispatches a request and returns its answer (nil while unanswered).
    private func call(_ table: OperationTable, _ op: String, _ args: JSONObject = [:]) -> Result<JSONObject, ControlError>? {
        var answer: Result<JSONObject, ControlError>?
        table.dispatch(ControlRequest(id: 1, op: op, args: args), client: nil) { answer = $0 }
        return answer
    }

    private func message(_ result: Result<JSONObject, ControlError>?) -> String? {
        if case .failure(let error)? = result { return error.message }
        return nil
    }

    /// The table remembers the op it found last; an op asked for after it is still found by its
    /// own name, refused on the other side and unknown when it is.
    func testTheOpFoundLastDoesNotStandInForAnother() throws {
        let watch = table(.watch)
        XCTAssertNil(call(watch, "test.later"), "found, and answers later")
        XCTAssertEqual(message(call(watch, "test.greet", ["name": "x"])), "test.greet is an op of the phone, not the watch")
        XCTAssertEqual(message(call(watch, "test.fail")), "not today")
        XCTAssertEqual(message(call(watch, "test.fail")), "not today")
        XCTAssertTrue(message(call(watch, "test.gree"))?.hasPrefix("unknown op 'test.gree'") ?? false)
        let phone = table(.phone)
        XCTAssertEqual(try XCTUnwrap(call(phone, "test.greet", ["name": "a"])).get()["greeting"], "hello a ")
        XCTAssertEqual(try XCTUnwrap(call(phone, "test.greet", ["name": "b"])).get()["greeting"], "hello b ")
        XCTAssertEqual(message(call(phone, "test.fail")), "not today")
    }

    func testATestOpRegisteredThroughAFeatureIsServed() throws {
        let table = table(.phone)
        let result = try XCTUnwrap(call(table, "test.greet", ["name": "watch", "times": 2])).get()
        XCTAssertEqual(result["greeting"], "hello watch hello watch ")
        XCTAssertEqual(feature.greeted, ["watch"])
        XCTAssertEqual(table.listing["ops"]?.arrayValue?.count, 3)
        let listed = try XCTUnwrap(table.listing["ops"]?.arrayValue?.first?.objectValue)
        XCTAssertEqual(listed["name"], "test.greet")
        XCTAssertEqual(listed["sides"], ["phone"])
        XCTAssertEqual(listed["arguments"], [["name": "name", "type": "string", "required": true, "summary": "who"],
                                             ["name": "times", "type": "integer 1...3", "required": false]])
    }

    func testArgumentsAreCheckedBeforeTheHandler() {
        let table = table(.phone)
        XCTAssertEqual(message(call(table, "test.greet")), "test.greet: missing required argument 'name'")
        XCTAssertEqual(message(call(table, "test.greet", ["name": 7])), "test.greet: argument 'name' must be a string, got integer")
        XCTAssertEqual(message(call(table, "test.greet", ["name": "a", "times": 4])), "test.greet: argument 'times' must be in 1...3, got 4")
        XCTAssertEqual(message(call(table, "test.greet", ["name": "a", "loud": true])),
                       "test.greet: unknown argument 'loud' (expected one of: name, times)")
        XCTAssertEqual(message(call(table, "test.fail", ["x": 1])), "test.fail: unknown argument 'x' (this operation takes no arguments)")
        XCTAssertEqual(feature.greeted, [], "no handler ran")
    }

    func testUnknownOpsAndOpsOfTheOtherSide() {
        XCTAssertEqual(message(call(table(.watch), "test.greet", ["name": "a"])), "test.greet is an op of the phone, not the watch")
        XCTAssertEqual(message(call(table(.watch), "test.nothing")), "unknown op 'test.nothing' (known: test.fail, test.later)")
        XCTAssertEqual(table(.watch).operations.map(\.name), ["test.fail", "test.later"])
    }

    func testHandlerErrorsBecomeAnswers() {
        guard case .failure(let error)? = call(table(.phone), "test.fail") else { return XCTFail() }
        XCTAssertEqual(error.domain, "WCErrorDomain")
        XCTAssertEqual(error.code, 7007)
        XCTAssertEqual(error.name, "notReachable")
    }

    func testAStoppingDaemonAnswersWaitingCallsOnce() {
        let table = table(.phone)
        var answers: [Result<JSONObject, ControlError>] = []
        table.dispatch(ControlRequest(id: 1, op: "test.later"), client: nil) { answers.append($0) }
        XCTAssertTrue(answers.isEmpty)
        table.failOutstanding(.control(.shuttingDown, "stopping"))
        table.failOutstanding(.control(.shuttingDown, "stopping"))
        XCTAssertEqual(answers.count, 1)
        guard case .failure(let error)? = answers.first else { return XCTFail() }
        XCTAssertEqual(error.name, "shuttingDown")
    }
}

import LinkControl
@testable import LinkDaemon
import LinkJSON
import LinkSession
import TestSupport
import WireProtocol
import XCTest

/// A feature of the tests only, written the way docs/architecture.md ("Adding an op") says.
private final class GreetingFeature: DaemonFeature {
    private(set) var greeted: [String] = []

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "test.greet", sides: .phone, summary: "greets someone",
                arguments: [.required("name", .string, "who"), .optional("times", .integer(1...3))]
            ) { [unowned self] call in
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

    /// Each request finds its own op, whatever came before: refused on the other side, unknown
    /// when it is.
    func testEachRequestFindsItsOwnOp() throws {
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
        XCTAssertEqual(
            listed["arguments"],
            [
                ["name": "name", "type": "string", "required": true, "summary": "who"],
                ["name": "times", "type": "integer 1...3", "required": false],
            ])
    }

    func testArgumentsAreCheckedBeforeTheHandler() {
        let table = table(.phone)
        XCTAssertEqual(message(call(table, "test.greet")), "test.greet: missing required argument 'name'")
        XCTAssertEqual(message(call(table, "test.greet", ["name": 7])), "test.greet: argument 'name' must be a string, got integer")
        XCTAssertEqual(message(call(table, "test.greet", ["name": "a", "times": 4])), "test.greet: argument 'times' must be in 1...3, got 4")
        XCTAssertEqual(
            message(call(table, "test.greet", ["name": "a", "loud": true])),
            "test.greet: unknown argument 'loud' (expected one of: name, times)")
        XCTAssertEqual(message(call(table, "test.fail", ["x": 1])), "test.fail: unknown argument 'x' (this operation takes no arguments)")
        XCTAssertEqual(feature.greeted, [], "no handler ran")
    }

    /// The one-scan look at arguments lets a call through only when each check would: on
    /// 20,000 arguments drawn from names an op has and has not, and values of every kind, in
    /// and out of range, null included. Usual arguments go through it.
    func testArgumentsPlainlyAcceptedPassEveryCheck() throws {
        // Each kind with values it takes (edges of ranges among them).
        let kinds: [(ControlOperation.Argument.Kind, [JSONValue])] = [
            (.string, ["s", ""]), (.number(0...1), [0.5, 1]), (.bool, [true, false]), (.integer(1...3), [1, 3]),
            (.integer(nil), [-7, 0]), (.object, [[:], ["k": 1]]), (.array, [[], [1]]), (.data, [["$data": "AA=="]]),
            (.objectOrNull, [.null, [:]]),
        ]
        let operations = [false, true].map { others in
            ControlOperation(
                "test.kinds", summary: "every kind",
                arguments: kinds.enumerated().map { index, entry in
                    index % 2 == 0 ? .required("a\(index)", entry.0) : .optional("a\(index)", entry.0)
                }, takesOtherArguments: others
            ) { _ in }
        }
        let values: [JSONValue] = [.null, true, 0, 2, 7, -1, 2.0, 0.5, 1e300, "s", "", [], [1], [:], ["$data": "AA=="], ["k": 1]]
        var generator = SeededGenerator(seed: testSeed(default: 2938))
        var plain = 0
        for _ in 0..<20_000 {
            var args = JSONObject()
            for (index, entry) in kinds.enumerated() {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<7: args["a\(index)"] = entry.1.randomElement(using: &generator)
                case 7..<9: args["a\(index)"] = values.randomElement(using: &generator)
                default: break
                }
            }
            if Int.random(in: 0..<10, using: &generator) == 0 { args["other"] = values.randomElement(using: &generator) }
            for operation in operations where operation.plainlyAccepts(args) {
                plain += 1
                let call = OperationCall(request: ControlRequest(id: 1, op: operation.name, args: args), role: .phone, client: nil) { _ in }
                XCTAssertNoThrow(try OperationTable.checkArguments(of: call, for: operation), "\(args)")
            }
        }
        XCTAssertGreaterThan(plain, 100)
        let send = ControlOperation(
            "message.send", summary: "",
            arguments: [
                .required("message", .object), .optional("wantsReply", .bool),
                .optional("timeoutMs", .integer(1...600_000)),
            ]
        ) { _ in }
        XCTAssertTrue(send.plainlyAccepts(["message": ["k": "v"], "wantsReply": true, "timeoutMs": 5_000]))
        XCTAssertFalse(send.plainlyAccepts(["message": ["k": "v"], "timeoutMs": 0]))
        XCTAssertFalse(send.plainlyAccepts(["wantsReply": true]))
        XCTAssertFalse(send.plainlyAccepts(["message": [:], "extra": 1]))
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

import Foundation
import XCTest
@testable import LinkControl
import LinkJSON

final class ControlCodecTests: XCTestCase {
    private func parse(_ text: String) -> Result<ControlRequest, ControlRequestFailure> {
        ControlCodec.parseRequest(line: Array(text.utf8))
    }

    private func assertBadRequest(
        _ text: String, id: JSONValue?, _ fragment: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        switch parse(text) {
        case .success(let request):
            XCTFail("accepted \(request)", file: file, line: line)
        case .failure(let failure):
            XCTAssertEqual(failure.id, id, file: file, line: line)
            XCTAssertEqual(failure.error.domain, "control", file: file, line: line)
            XCTAssertEqual(failure.error.name, "badRequest", file: file, line: line)
            XCTAssertEqual(failure.error.code, 1, file: file, line: line)
            XCTAssertTrue(failure.error.message.contains(fragment), "'\(failure.error.message)' lacks '\(fragment)'", file: file, line: line)
        }
    }

    func testValidRequests() throws {
        let request = try parse(#"{"id": 7, "op": "message.send", "args": {"message": {"a": 1}}}"#).get()
        XCTAssertEqual(request, ControlRequest(id: 7, op: "message.send", args: ["message": ["a": 1]]))
        XCTAssertEqual(try parse(#"{"op": "status", "id": "abc"}"#).get(), ControlRequest(id: "abc", op: "status"))
        XCTAssertEqual(try parse(#"{"id": 1.5, "op": "status", "args": null}"#).get().id, .double(1.5))
    }

    func testEnvelopeErrors() {
        assertBadRequest("{\"id\": 1, ", id: nil, "invalid JSON: unexpected end of input")
        assertBadRequest(#"{"id": 1 "op": "x"}"#, id: nil, "at byte 9")
        assertBadRequest("[1, 2]", id: nil, "a request must be a JSON object, got array")
        assertBadRequest(#"{"op": "status"}"#, id: nil, "missing 'id'")
        assertBadRequest(#"{"id": true, "op": "status"}"#, id: nil, "'id' must be a number or a string, got boolean")
        assertBadRequest(#"{"id": null, "op": "status"}"#, id: nil, "got null")
        assertBadRequest(#"{"id": {}, "op": "status"}"#, id: nil, "got object")
        assertBadRequest(#"{"id": 3}"#, id: 3, "missing 'op'")
        assertBadRequest(#"{"id": 3, "op": 12}"#, id: 3, "'op' must be a string, got integer")
        assertBadRequest(#"{"id": "x", "op": ""}"#, id: "x", "'op' must not be empty")
        assertBadRequest(#"{"id": 4, "op": "status", "args": [1]}"#, id: 4, "'args' must be an object, got array")
        assertBadRequest(#"{"id": 5, "op": "status", "arg": {}}"#, id: 5, "unknown request member 'arg' (expected: id, op, args)")
    }

    /// A well-formed request is read member by member, without the whole parse: the reading must
    /// be the whole parse's, member order included, on requests and on lines that are almost
    /// requests (each byte of a set of lines changed, removed or doubled).
    func testShortcutReadsAsTheWholeParse() {
        let lines = [
            #"{"op":"message.send","args":{"wantsReply":true,"message":{"key0":"value-000","n":[1,{"x":null}]}},"id":7}"#,
            #"{ "id" : "a\u00e9" , "op" : "status" , "args" : null }"#,
            #"{"id":1.5e3,"op":"context.update","args":{"context":{},"b":false,"s":"\n"}}"#,
            #"{"id":2,"op":"status","op":"again"}"#,
            #"{"id":2,"op":"status","args":{},"args":{"a":1}}"#,
            #"{"id":2,"\u006fp":"status"}"#,
            #"{"id":-0,"op":"x","args":{"deep":{"deeper":{"deepest":[[[]]]}}}}"#,
            "{\"id\":3,\"op\":\"\u{e9}\"}",
            "{}", "[]", "", " ", "null",
        ]
        var checked = 0
        func check(_ line: [UInt8]) {
            let shortcut = ControlCodec.parseRequest(line: line)
            let whole = ControlCodec.parseWholeRequest(line: line)
            XCTAssertEqual(shortcut, whole, String(decoding: line, as: UTF8.self))
            if case .success(let a) = shortcut, case .success(let b) = whole {
                XCTAssertEqual(ControlCodec.request(a), ControlCodec.request(b), "member order")
            }
            checked += 1
        }
        for text in lines {
            let line = Array(text.utf8)
            check(line)
            for index in line.indices {
                for replacement in [UInt8(ascii: "\""), UInt8(ascii: "}"), UInt8(ascii: ","), UInt8(ascii: " "), 0x01, 0xC3, UInt8(ascii: "1")] {
                    var changed = line
                    changed[index] = replacement
                    check(changed)
                }
                var removed = line
                removed.remove(at: index)
                check(removed)
                var doubled = line
                doubled.insert(line[index], at: index)
                check(doubled)
            }
        }
        XCTAssertGreaterThan(checked, 3_000)
    }

    func testResponseLines() throws {
        let success = ControlCodec.success(id: 7, result: ["state": 2])
        XCTAssertEqual(String(decoding: success, as: UTF8.self), "{\"id\":7,\"ok\":true,\"result\":{\"state\":2}}\n")

        let error = ControlError(domain: "WCErrorDomain", code: 7007, name: "notReachable", message: "counterpart is not reachable")
        let failure = ControlCodec.failure(id: "q", error: error)
        XCTAssertEqual(
            String(decoding: failure, as: UTF8.self),
            "{\"id\":\"q\",\"ok\":false,\"error\":{\"domain\":\"WCErrorDomain\",\"code\":7007,\"name\":\"notReachable\",\"message\":\"counterpart is not reachable\"}}\n"
        )
        let anonymous = ControlCodec.failure(id: nil, error: .control(.badRequest, "x"))
        XCTAssertEqual(try JSON.parse(anonymous.dropLast())["id"], .null)

        let event = ControlCodec.event(name: "session.reachabilityDidChange", at: Date(timeIntervalSince1970: 1_700_000_000.5), data: ["isReachable": true])
        XCTAssertEqual(
            String(decoding: event, as: UTF8.self),
            "{\"event\":\"session.reachabilityDidChange\",\"at\":\"2023-11-14T22:13:20.500Z\",\"data\":{\"isReachable\":true}}\n")
        XCTAssertEqual(event.filter { $0 == UInt8(ascii: "\n") }.count, 1)
    }

    func testRequestLineRoundTrip() throws {
        let request = ControlRequest(id: 9, op: "context.update", args: ["context": ["k": "line\nbreak"]])
        let line = ControlCodec.request(request)
        XCTAssertEqual(line.last, UInt8(ascii: "\n"))
        XCTAssertEqual(try ControlCodec.parseRequest(line: line.dropLast()).get(), request)
    }

    func testFailureResponseLineEchoesReadableId() throws {
        guard case .failure(let failure) = parse(#"{"id": 11, "op": 1}"#) else { return XCTFail("accepted") }
        let response = try JSON.parse(failure.responseLine.dropLast())
        XCTAssertEqual(response["id"], 11)
        XCTAssertEqual(response["ok"], false)
        XCTAssertEqual(response["error"]?["name"], "badRequest")
    }

    func testControlErrors() {
        XCTAssertEqual(
            ControlErrorName.allCases.map { "\($0.rawValue) \($0.name)" },
            ["1 badRequest", "2 unknownOp", "3 invalidArgument", "4 lineTooLong", "5 internalError", "6 shuttingDown", "7 busy"])
        let error = ControlError.control(.unknownOp, "no operation 'x'")
        XCTAssertEqual(error, ControlError(domain: "control", code: 2, name: "unknownOp", message: "no operation 'x'"))
        XCTAssertEqual(error.description, "control 2 unknownOp: no operation 'x'")
        XCTAssertEqual(error.json, ["domain": "control", "code": 2, "name": "unknownOp", "message": "no operation 'x'"])
        XCTAssertEqual(ControlError(json: error.json), error)
        XCTAssertEqual(ControlError(json: ["domain": "d", "code": 1.0, "name": "n"]), ControlError(domain: "d", code: 1, name: "n", message: ""))
        XCTAssertNil(ControlError(json: ["domain": "d", "code": "1", "name": "n", "message": "m"]))
        XCTAssertNil(ControlError(json: ["code": 1, "name": "n", "message": "m"]))
        XCTAssertNil(ControlError(json: ["domain": "d", "code": 1, "name": "n", "message": 5]))
        XCTAssertNil(ControlError(json: "text"))
    }
}

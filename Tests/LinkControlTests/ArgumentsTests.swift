import XCTest
@testable import LinkControl

final class ArgumentsTests: XCTestCase {
    private let arguments = Arguments(
        [
            "message": ["a": 1], "timeoutMs": "soon", "count": 5, "ratio": 0.5, "whole": 3.0, "flag": true,
            "name": "x", "list": [1], "nothing": nil,
        ],
        op: "message.send")

    private func assertInvalid<T>(
        _ expression: @autoclosure () throws -> T, _ message: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { error in
            guard let error = error as? ControlError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.domain, "control", file: file, line: line)
            XCTAssertEqual(error.name, "invalidArgument", file: file, line: line)
            XCTAssertEqual(error.code, 3, file: file, line: line)
            XCTAssertEqual(error.message, message, file: file, line: line)
        }
    }

    func testReadsPresentValues() throws {
        XCTAssertEqual(try arguments.object("message"), ["a": 1])
        XCTAssertEqual(try arguments.int("count"), 5)
        XCTAssertEqual(try arguments.int("whole"), 3)
        XCTAssertEqual(try arguments.int("count", range: 1...10), 5)
        XCTAssertEqual(try arguments.double("ratio"), 0.5)
        XCTAssertEqual(try arguments.double("count"), 5.0)
        XCTAssertEqual(try arguments.bool("flag"), true)
        XCTAssertEqual(try arguments.string("name"), "x")
        XCTAssertEqual(try arguments.array("list"), [1])
        XCTAssertEqual(arguments.value("nothing"), .null)
        XCTAssertTrue(arguments.contains("name"))
        XCTAssertFalse(arguments.contains("nothing"))
    }

    func testOptionalReadersTreatMissingAndNullAsAbsent() throws {
        XCTAssertNil(try arguments.optionalString("absent"))
        XCTAssertNil(try arguments.optionalString("nothing"))
        XCTAssertNil(try arguments.optionalInt("absent", range: 1...2))
        XCTAssertNil(try arguments.optionalBool("nothing"))
        XCTAssertNil(try arguments.optionalObject("absent"))
        XCTAssertNil(try arguments.optionalArray("absent"))
        XCTAssertNil(try arguments.optionalDouble("absent"))
        XCTAssertEqual(try arguments.optionalString("name"), "x")
    }

    func testErrorTexts() {
        assertInvalid(try arguments.string("absent"), "message.send: missing required argument 'absent'")
        assertInvalid(try arguments.string("nothing"), "message.send: missing required argument 'nothing'")
        assertInvalid(try arguments.int("timeoutMs"), "message.send: argument 'timeoutMs' must be an integer, got string")
        assertInvalid(try arguments.int("ratio"), "message.send: argument 'ratio' must be an integer, got number")
        assertInvalid(try arguments.optionalInt("count", range: 10...20), "message.send: argument 'count' must be in 10...20, got 5")
        assertInvalid(try arguments.bool("name"), "message.send: argument 'name' must be a boolean, got string")
        assertInvalid(try arguments.string("count"), "message.send: argument 'count' must be a string, got integer")
        assertInvalid(try arguments.object("list"), "message.send: argument 'list' must be an object, got array")
        assertInvalid(try arguments.array("message"), "message.send: argument 'message' must be an array, got object")
        assertInvalid(try arguments.double("flag"), "message.send: argument 'flag' must be a number, got boolean")
    }

    func testRejectUnknownKeys() throws {
        let args = Arguments(["message": [:], "wantReply": true], op: "message.send")
        assertInvalid(
            try args.rejectUnknownKeys(allowed: ["message", "wantsReply", "timeoutMs"]),
            "message.send: unknown argument 'wantReply' (expected one of: message, timeoutMs, wantsReply)")
        assertInvalid(
            try Arguments(["x": 1], op: "status").rejectUnknownKeys(allowed: []),
            "status: unknown argument 'x' (this operation takes no arguments)")
        XCTAssertNoThrow(try args.rejectUnknownKeys(allowed: ["message", "wantReply"]))
    }
}

extension ArgumentsTests {
    /// Objects in a request's arguments are kept as their text; the type checks leave them so,
    /// and the readers of objects and arrays hand them out read.
    func testObjectsKeptAsTextAreCheckedAndRead() throws {
        guard case .success(let request) = ControlCodec.parseRequest(line: Array(#"{"id":1,"op":"x","args":{"m":{"a":[{"b":1}]},"l":[{"c":2}],"n":3}}"#.utf8))
        else {
            return XCTFail("the request does not parse")
        }
        let args = Arguments(request.args, op: "x")
        XCTAssertNotNil(args.value("m")?.objectValue?.jsonText, "kept as text")
        XCTAssertNoThrow(try args.checkIsObject("m"))
        XCTAssertNoThrow(try args.checkIsObject("missing"))
        XCTAssertNoThrow(try args.checkIsArray("l"))
        assertInvalid(try args.checkIsObject("n"), "x: argument 'n' must be an object, got integer")
        assertInvalid(try args.checkIsArray("m"), "x: argument 'm' must be an array, got object")
        let m = try args.object("m")
        XCTAssertNil(m.jsonText, "read once")
        XCTAssertEqual(m, ["a": [["b": 1]]])
        XCTAssertEqual(try args.array("l"), [["c": 2]])
        XCTAssertNil(try args.array("l").first?.objectValue?.jsonText)
    }
}

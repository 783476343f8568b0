#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkJSON

/// Reads requests and writes responses and events of the control protocol, one JSON object a line.
public enum ControlCodec {
    /// The members a request may have.
    public static let requestKeys: [String] = ["id", "op", "args"]

    /// The depth of objects that are arguments' values (the request is at depth 1, its `args`
    /// at 2), and deeper: kept as text by ``parseRequest(line:)``.
    static let argumentObjectDepth = 3

    /// Reads one request line (without its `"\n"`).
    ///
    /// Every failure is a `badRequest` error naming what was wrong, together with the request's
    /// id when it could be read, so the error response can echo it. `args` may be missing or `null`,
    /// which reads as no arguments.
    ///
    /// Objects inside an argument (a message's dictionary, say) are checked as the rest of the
    /// line is but kept as their text (``argumentObjectDepth``): most are passed on as they
    /// are, and a dictionary payload is encoded straight from its text.
    public static func parseRequest(line: some Collection<UInt8>) -> Result<ControlRequest, ControlRequestFailure> {
        if let request = readWellFormedRequest(line) { return .success(request) }
        return parseWholeRequest(line: line)
    }

    /// ``parseRequest(line:)`` without its shortcut for well-formed requests: the line parsed
    /// as a whole, then checked. Every error comes from here.
    static func parseWholeRequest(line: some Collection<UInt8>) -> Result<ControlRequest, ControlRequestFailure> {
        let value: JSONValue
        do {
            value = try JSON.parse(line, keepingObjectsAsTextFrom: argumentObjectDepth)
        } catch {
            return .failure(ControlRequestFailure(id: nil, error: .control(.badRequest, "invalid JSON: \(error)")))
        }
        guard case .object(let object) = value else {
            return .failure(ControlRequestFailure(id: nil, error: .control(.badRequest, "a request must be a JSON object, got \(value.typeName)")))
        }
        guard let id = object["id"] else {
            return .failure(ControlRequestFailure(id: nil, error: .control(.badRequest, "missing 'id' (a number or a string)")))
        }
        switch id {
        case .int, .double, .string:
            break
        default:
            return .failure(ControlRequestFailure(id: nil, error: .control(.badRequest, "'id' must be a number or a string, got \(id.typeName)")))
        }
        func bad(_ message: String) -> Result<ControlRequest, ControlRequestFailure> {
            .failure(ControlRequestFailure(id: id, error: .control(.badRequest, message)))
        }
        if let unknown = object.first(where: { !requestKeys.contains($0.key) })?.key {
            return bad("unknown request member '\(unknown)' (expected: \(requestKeys.joined(separator: ", ")))")
        }
        guard let opValue = object["op"] else {
            return bad("missing 'op' (the operation name)")
        }
        guard case .string(let op) = opValue else {
            return bad("'op' must be a string, got \(opValue.typeName)")
        }
        guard !op.isEmpty else {
            return bad("'op' must not be empty")
        }
        var args = JSONObject()
        switch object["args"] {
        case nil, .null?:
            break
        case .object(let given)?:
            args = given
        case let other?:
            return bad("'args' must be an object, got \(other.typeName)")
        }
        return .success(ControlRequest(id: id, op: op, args: args))
    }

    /// The request on `line` when it is well formed and its members' names are plain text,
    /// read member by member (``JSON/readMembers(_:keepingObjectsAsTextFrom:_:)``) rather than
    /// built as an object first: what nearly every request is, and the cost every request
    /// pays. Anything else (and every error) is left to the whole parse, which names it.
    private static func readWellFormedRequest(_ line: some Collection<UInt8>) -> ControlRequest? {
        var id: JSONValue?
        var op: String?
        var args: JSONObject?
        let read = JSON.readMembers(line, keepingObjectsAsTextFrom: argumentObjectDepth) { key, value in
            if id == nil, Self.key(key, is: "id") {
                switch value {
                case .int, .double, .string: id = value
                default: return false
                }
            } else if op == nil, Self.key(key, is: "op") {
                guard case .string(let name) = value, !name.isEmpty else { return false }
                op = name
            } else if args == nil, Self.key(key, is: "args") {
                switch value {
                case .object(let object): args = object
                case .null: args = JSONObject()
                default: return false
                }
            } else {
                return false
            }
            return true
        }
        guard read, let id, let op else { return nil }
        return ControlRequest(id: id, op: op, args: args ?? JSONObject())
    }

    /// Whether a member's `key` is `name`, compared byte by byte where it lies.
    @inline(__always)
    private static func key(_ key: UnsafeBufferPointer<UInt8>, is name: StaticString) -> Bool {
        guard key.count == name.utf8CodeUnitCount else { return false }
        for index in key.indices where key[index] != name.utf8Start[index] { return false }
        return true
    }

    /// A success response line, including its `"\n"`: `{"id":7,"ok":true,"result":{...}}`.
    public static func success(id: JSONValue, result: JSONObject) -> [UInt8] {
        var bytes: [UInt8] = []
        // Room for most results (a message's reply of ten keys is about 230 bytes): growing
        // from a small guess cost two reallocations a response.
        bytes.reserveCapacity(512)
        appendSuccess(id: id, result: result, to: &bytes)
        return bytes
    }

    /// Appends the line ``success(id:result:)`` makes to `bytes`: into a buffer kept for
    /// every response of a connection, which then costs no allocation.
    public static func appendSuccess(id: JSONValue, result: JSONObject, to bytes: inout [UInt8]) {
        _ = appendSuccess(id: id, result: result, to: &bytes, detachingTextsOfAtLeast: .max)
    }

    /// ``appendSuccess(id:result:to:)``, with the objects in `result` kept as compact text of
    /// `threshold` bytes or more left out and returned with the offsets where they belong
    /// (``JSON/serialize(_:into:detachingTextsOfAtLeast:)``): a large reply's dictionary is
    /// then written from its own text, not copied into the line.
    public static func appendSuccess(
        id: JSONValue, result: JSONObject, to bytes: inout [UInt8], detachingTextsOfAtLeast threshold: Int
    ) -> [(offset: Int, text: [UInt8])] {
        // The envelope written around the result, not made an object first: every response
        // pays for it.
        bytes.append(contentsOf: successHead)
        JSON.serialize(id, into: &bytes)
        bytes.append(contentsOf: successMiddle)
        let detached = JSON.serialize(.object(result), into: &bytes, detachingTextsOfAtLeast: threshold)
        bytes.append(contentsOf: successEnd)
        return detached
    }

    private static let successHead = Array(#"{"id":"#.utf8)
    private static let successMiddle = Array(#","ok":true,"result":"#.utf8)
    private static let successEnd = Array("}\n".utf8)

    /// An error response line, including its `"\n"`: `{"id":7,"ok":false,"error":{...}}`;
    /// the id is `null` when the request's id could not be read.
    public static func failure(id: JSONValue?, error: ControlError) -> [UInt8] {
        line(["id": id ?? .null, "ok": false, "error": error.json])
    }

    /// An event line, including its `"\n"`: `{"event":"...","at":"<ISO 8601>","data":{...}}`.
    public static func event(name: String, at date: Date, data: JSONObject) -> [UInt8] {
        line(["event": .string(name), "at": .string(ISO8601Timestamp.string(from: date)), "data": .object(data)])
    }

    /// An event line stamped `milliseconds` after 1970 (a daemon's device clock).
    public static func event(name: String, atMilliseconds milliseconds: Int64, data: JSONObject) -> [UInt8] {
        line(["event": .string(name), "at": .string(ISO8601Timestamp.string(fromMilliseconds: milliseconds)), "data": .object(data)])
    }

    /// A request line, including its `"\n"`.
    public static func request(_ request: ControlRequest) -> [UInt8] {
        line(request.json)
    }

    private static func line(_ value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = []
        JSON.serialize(value, into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}

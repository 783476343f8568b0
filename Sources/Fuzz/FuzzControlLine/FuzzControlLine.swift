import LinkControl
import LinkJSON
import WireProtocol

/// Splits the input into control lines, parses each as a request, reads its arguments with
/// every accessor, converts property-list arguments, and checks that JSON re-serializes stably,
/// that a parse keeping objects as text agrees with the full one (errors included), that an
/// object read member by member is the parsed one, and that a dictionary encoded straight from
/// its text is the one encoded from the parsed object.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var framer = LineFramer(maximumLineLength: 4096)
    framer.append(UnsafeRawBufferPointer(start: data, count: size))
    framer.append(contentsOf: [UInt8(ascii: "\n")])
    var outputs: [LineFramerOutput] = []
    while let output = framer.next() { outputs.append(output) }
    checkLentLines(UnsafeRawBufferPointer(start: data, count: size), are: outputs)
    for output in outputs {
        guard case .line(let line) = output else { continue }
        checkJSON(line)
        guard case .success(let request) = ControlCodec.parseRequest(line: line) else { continue }
        readArguments(Arguments(request.args, op: request.op))
        _ = ControlCodec.request(request)
        _ = ControlCodec.success(id: request.id, result: request.args)
    }
    return 0
}

/// The lines lent by `LineFramer.append(_:each:)` are the queued ones, the input split in two
/// where its first byte says.
private func checkLentLines(_ input: UnsafeRawBufferPointer, are queued: [LineFramerOutput]) {
    var framer = LineFramer(maximumLineLength: 4096)
    var lent: [LineFramerOutput] = []
    let split = input.isEmpty ? 0 : Int(input[0]) % input.count
    for piece in [UnsafeRawBufferPointer(rebasing: input[..<split]), UnsafeRawBufferPointer(rebasing: input[split...])] {
        framer.append(piece) { output in
            lent.append(LineFramerOutput(output))
            return true
        }
    }
    [UInt8(ascii: "\n")].withUnsafeBytes { newline in
        framer.append(newline) { output in
            lent.append(LineFramerOutput(output))
            return true
        }
    }
    precondition(lent == queued, "lent lines differ from the queued ones")
}

private func checkJSON(_ line: [UInt8]) {
    let full = Result { try JSON.parse(line) }
    for depth in [1, 2, 3] {
        let lazy = Result { try JSON.parse(line, keepingObjectsAsTextFrom: depth) }
        switch (full, lazy) {
        case (.success(let value), .success(let lazyValue)):
            precondition(lazyValue == value, "objects kept as text read differently")
            precondition(JSON.serialize(lazyValue) == JSON.serialize(value), "objects kept as text are written differently")
            checkEncodingFromText(lazyValue)
        case (.failure(let error), .failure(let lazyError)):
            precondition("\(error)" == "\(lazyError)", "objects kept as text fail differently")
        default:
            preconditionFailure("objects kept as text are checked differently")
        }
    }
    var members: [(String, JSONValue)] = []
    let readMembers = JSON.readMembers(line, keepingObjectsAsTextFrom: 2) { key, value in
        members.append((String(decoding: key, as: UTF8.self), value))
        return true
    }
    if readMembers {
        guard case .object(let object)? = try? full.get() else { preconditionFailure("members read from what is not an object") }
        precondition(JSON.serialize(.object(JSONObject(members))) == JSON.serialize(.object(object)), "members read differently")
    }
    guard let value = try? full.get() else { return }
    var first: [UInt8] = []
    JSON.serialize(value, into: &first)
    guard let again = try? JSON.parse(first) else {
        preconditionFailure("serialized JSON does not parse: \(String(decoding: first, as: UTF8.self))")
    }
    var second: [UInt8] = []
    JSON.serialize(again, into: &second)
    precondition(first == second, "JSON serialization is not stable")
}

private func readArguments(_ arguments: Arguments) {
    for key in arguments.object.keys {
        _ = try? arguments.string(key)
        _ = try? arguments.optionalString(key)
        _ = try? arguments.bool(key)
        _ = try? arguments.optionalBool(key)
        _ = try? arguments.int(key)
        _ = try? arguments.int(key, range: 0...65_536)
        _ = try? arguments.optionalInt(key, range: -1...1)
        _ = try? arguments.double(key)
        _ = try? arguments.optionalDouble(key)
        _ = try? arguments.object(key)
        _ = try? arguments.optionalObject(key)
        _ = try? arguments.array(key)
        _ = try? arguments.optionalArray(key)
        if let value = arguments.value(key), let plist = try? PlistJSON.propertyList(from: value, path: key) {
            _ = PlistJSON.json(from: plist)
        }
    }
    _ = try? arguments.rejectUnknownKeys(allowed: ["message", "data", "id", "timeout"])
    if let dictionary = try? PlistJSON.dictionary(from: .object(arguments.object), path: "args") {
        _ = try? PropertyListCodec.encode(dictionary)
        _ = PlistJSON.json(from: dictionary)
    }
}

/// Every object kept as text that encodes straight from its text encodes as its parsed members do.
private func checkEncodingFromText(_ value: JSONValue) {
    switch value {
    case .object(let object):
        if let text = object.jsonText,
            let encoded = PlistJSON.encodedDictionary(jsonText: text, stringsArePlain: object.jsonTextStringsArePlain)
        {
            guard let entries = try? PlistJSON.entries(from: value, path: "x"),
                let expected = try? PropertyListCodec.encode(entries: entries)
            else { preconditionFailure("a dictionary encodes from its text but not from its members") }
            precondition(encoded == expected, "a dictionary encodes differently from its text")
            precondition(
                PlistJSON.encodedDictionary(jsonText: text) == encoded,
                "a dictionary encodes differently from its text read as plain and read byte by byte")
        }
        for (_, member) in object { checkEncodingFromText(member) }
    case .array(let elements):
        elements.forEach(checkEncodingFromText)
    default:
        break
    }
}

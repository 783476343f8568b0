import LinkControl
import LinkJSON
import WireProtocol

/// Splits the input into control lines, parses each as a request, reads its arguments with
/// every accessor, converts property-list arguments, and checks that JSON re-serializes stably.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var framer = LineFramer(maximumLineLength: 4096)
    framer.append(UnsafeRawBufferPointer(start: data, count: size))
    framer.append(contentsOf: [UInt8(ascii: "\n")])
    while let output = framer.next() {
        guard case .line(let line) = output else { continue }
        checkJSON(line)
        guard case .success(let request) = ControlCodec.parseRequest(line: line) else { continue }
        readArguments(Arguments(request.args, op: request.op))
        _ = ControlCodec.request(request)
        _ = ControlCodec.success(id: request.id, result: request.args)
    }
    return 0
}

private func checkJSON(_ line: [UInt8]) {
    guard let value = try? JSON.parse(line) else { return }
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

import LinkControl
import LinkJSON
import WireProtocol

/// One control op: its name, the sides it exists on, its arguments, what it does, and a line
/// saying so. Every op, core or feature, is one `ControlOperation` in the daemon's ``OperationTable``.
///
/// A class, made once and never changed: the table hands an op to each request, and a copy of
/// a struct of strings, lists and a closure took five references and released them after.
public final class ControlOperation {
    /// The sides an op exists on.
    public struct Sides: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let phone = Sides(rawValue: 1)
        public static let watch = Sides(rawValue: 2)
        public static let both: Sides = [.phone, .watch]

        public func includes(_ role: Role) -> Bool { contains(role == .phone ? Sides.phone : Sides.watch) }

        public var names: [String] {
            [(Sides.phone, "phone"), (Sides.watch, "watch")].compactMap { contains($0.0) ? $0.1 : nil }
        }
    }

    public typealias Handler = (OperationCall) throws -> Void

    public let name: String
    public let sides: Sides
    public let summary: String
    public let arguments: [Argument]
    /// Arguments beyond `arguments` are the handler's to check (`device.set` takes flag names).
    public let takesOtherArguments: Bool
    /// The names of `arguments`, made once (every request's arguments are checked against them;
    /// an op has a handful, which a scan finds sooner than a hash).
    let argumentNames: [String]
    /// How many of `arguments` are required.
    let requiredCount: Int
    let handler: Handler

    public init(
        _ name: String, sides: Sides = .both, summary: String, arguments: [Argument] = [],
        takesOtherArguments: Bool = false, handler: @escaping Handler
    ) {
        self.name = name
        self.sides = sides
        self.summary = summary
        self.arguments = arguments
        self.takesOtherArguments = takesOtherArguments
        argumentNames = arguments.map(\.name)
        requiredCount = arguments.filter(\.isRequired).count
        self.handler = handler
    }

    /// Whether every check the table makes of `args` passes, seen in one scan of its members:
    /// each is an argument of the op (or the op takes others) with a value its kind plainly
    /// accepts, and every required argument is there. False when in doubt: the table then
    /// makes each check, which names what is wrong.
    func plainlyAccepts(_ args: JSONObject) -> Bool {
        var required = 0
        for (key, value) in args {
            guard let position = argumentNames.firstIndex(of: key) else {
                if takesOtherArguments { continue }
                return false
            }
            // An argument given as null is one not given (``Arguments/contains(_:)``).
            if case .null = value { continue }
            guard arguments[position].plainlyAccepts(value) else { return false }
            if arguments[position].isRequired { required += 1 }
        }
        return required == requiredCount
    }
}

extension ControlOperation {
    /// One argument of an op. The table checks presence and type before the handler runs,
    /// so a handler reads its arguments without re-checking them.
    public struct Argument: Sendable {
        public enum Kind: Sendable {
            case string
            case bool
            case integer(ClosedRange<Int64>?)
            case number(ClosedRange<Double>?)
            /// A JSON object (a property-list dictionary when the op sends it).
            case object
            case array
            /// `{"$data": "<base64>"}`.
            case data
            /// An object or null.
            case objectOrNull

            var name: String {
                switch self {
                case .string: return "string"
                case .bool: return "bool"
                case .integer(let range): return range.map { "integer \($0.lowerBound)...\($0.upperBound)" } ?? "integer"
                case .number(let range): return range.map { "number \($0.lowerBound)...\($0.upperBound)" } ?? "number"
                case .object: return "object"
                case .array: return "array"
                case .data: return "{\"$data\": base64}"
                case .objectOrNull: return "object or null"
                }
            }
        }

        public let name: String
        public let kind: Kind
        public let isRequired: Bool
        public let summary: String

        public static func required(_ name: String, _ kind: Kind, _ summary: String = "") -> Argument {
            Argument(name: name, kind: kind, isRequired: true, summary: summary)
        }

        public static func optional(_ name: String, _ kind: Kind, _ summary: String = "") -> Argument {
            Argument(name: name, kind: kind, isRequired: false, summary: summary)
        }

        /// Whether ``check(_:)`` passes `value` (not null) without a doubt: the usual values, in
        /// one look.
        func plainlyAccepts(_ value: JSONValue) -> Bool {
            switch (kind, value) {
            case (.string, .string), (.bool, .bool):
                return true
            case (.integer(let range), .int(let integer)):
                return range?.contains(integer) ?? true
            case (.object, .object), (.data, .object), (.objectOrNull, .object), (.array, .array):
                return true
            default:
                return false
            }
        }

        /// Refuses a value of the wrong type or out of range, naming the op and the argument.
        func check(_ args: Arguments) throws {
            guard args.contains(name) else {
                if isRequired { throw args.invalid("missing required argument '\(name)'") }
                return
            }
            switch kind {
            case .string: _ = try args.string(name)
            case .bool: _ = try args.bool(name)
            case .integer(let range): _ = try args.int(name, range: range)
            case .number(let range):
                let value = try args.double(name)
                if let range, !range.contains(value) {
                    throw args.invalid("argument '\(name)' must be in \(range.lowerBound)...\(range.upperBound), got \(value)")
                }
            case .object, .data, .objectOrNull: try args.checkIsObject(name)
            case .array: try args.checkIsArray(name)
            }
        }

        var json: JSONValue {
            var object: JSONObject = ["name": .string(name), "type": .string(kind.name), "required": .bool(isRequired)]
            if !summary.isEmpty { object["summary"] = .string(summary) }
            return .object(object)
        }
    }

    /// The op as `ops.list` shows it.
    var json: JSONValue {
        .object([
            "name": .string(name), "sides": .array(sides.names.map { .string($0) }), "summary": .string(summary),
            "arguments": .array(arguments.map(\.json)),
        ])
    }
}

/// What a handler gets: the request, its checked arguments, and the way to answer it
/// (exactly once, now or later on the loop's thread).
public struct OperationCall {
    public let request: ControlRequest
    public let args: Arguments
    public let role: Role
    /// The client that sent it, for ops that change the connection itself (`events.subscribe`).
    let client: ControlClientConnection?
    /// Where the answer goes. An answer given later keeps this alone, not the call with its
    /// request and arguments (a copy of the call took seven references and gave them back).
    let answerer: Answerer

    /// Where the answer goes: the table the call came through, which answers its caller once
    /// (the table is held, not a function made for each call); or a function.
    enum Answerer {
        case table(OperationTable, call: UInt64)
        case function((Result<JSONObject, ControlError>) -> Void)

        func respond(_ result: Result<JSONObject, ControlError>) {
            switch self {
            case .table(let table, let call): table.answer(call, result)
            case .function(let answer): answer(result)
            }
        }
    }

    init(
        request: ControlRequest, role: Role, client: ControlClientConnection?,
        answer: @escaping (Result<JSONObject, ControlError>) -> Void
    ) {
        self.init(request: request, role: role, client: client, answerer: .function(answer))
    }

    /// A call of `table`'s, number `call`.
    init(request: ControlRequest, role: Role, client: ControlClientConnection?, table: OperationTable, call: UInt64) {
        self.init(request: request, role: role, client: client, answerer: .table(table, call: call))
    }

    private init(request: ControlRequest, role: Role, client: ControlClientConnection?, answerer: Answerer) {
        self.request = request
        args = Arguments(request.args, op: request.op)
        self.role = role
        self.client = client
        self.answerer = answerer
    }

    public var op: String { request.op }

    /// The connection the call came on, as ``DaemonFeature/clientClosed(_:)`` names it.
    public var clientSerial: UInt64? { client?.serial }

    public func respond(_ result: Result<JSONObject, ControlError>) {
        answerer.respond(result)
    }

    public func succeed(_ result: JSONObject) { respond(.success(result)) }
    public func fail(_ error: ControlError) { respond(.failure(error)) }
}

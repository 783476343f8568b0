import LinkCollections
import LinkControl
import LinkJSON
import LinkSession
import WireProtocol

/// Every control op of one daemon, by name: the only way a request reaches a handler.
/// Unknown ops, ops of the other side and bad arguments are answered from the table.
public final class OperationTable {
    public let role: Role
    private var byName: [String: ControlOperation] = [:]
    private var order: [String] = []
    /// Calls not answered yet, so that a stopping daemon answers each of them once.
    private var outstanding = SequenceMap<Responder>()
    private var nextCall: UInt64 = 1

    public init(role: Role) {
        self.role = role
    }

    /// Adds ops; a name registered twice is a programming error.
    public func register(_ operations: [ControlOperation]) {
        for operation in operations {
            precondition(byName[operation.name] == nil, "the op \(operation.name) is registered twice")
            byName[operation.name] = operation
            order.append(operation.name)
        }
    }

    /// The ops of this daemon's side, in registration order.
    public var operations: [ControlOperation] {
        order.compactMap { byName[$0] }.filter { $0.sides.includes(role) }
    }

    public func operation(_ name: String) -> ControlOperation? {
        byName[name].flatMap { $0.sides.includes(role) ? $0 : nil }
    }

    /// `ops.list`.
    public var listing: JSONObject {
        ["role": .string(role.name), "ops": .array(operations.map(\.json))]
    }

    /// Checks `request` against the table and runs its handler; `respond` is called exactly
    /// once. Errors the handler throws become the answer.
    func dispatch(
        _ request: ControlRequest, client: ControlClientConnection?,
        respond: @escaping (Result<JSONObject, ControlError>) -> Void
    ) {
        let id = nextCall
        nextCall += 1
        outstanding[id] = Responder(respond: respond)
        do {
            let operation = try find(request.op)
            let call = OperationCall(request: request, role: role, client: client, table: self, call: id)
            if !operation.plainlyAccepts(call.args.object) { try Self.checkArguments(of: call, for: operation) }
            try operation.handler(call)
        } catch let error as ControlError {
            answer(id, .failure(error))
        } catch let error as SessionError {
            answer(id, .failure(error.controlError))
        } catch {
            answer(id, .failure(.control(.internalError, "\(request.op): \(error)")))
        }
    }

    /// Answers call `id` (``OperationCall/respond(_:)``): its caller hears the first answer
    /// only, and none once the daemon has answered it on stopping.
    func answer(_ id: UInt64, _ result: Result<JSONObject, ControlError>) {
        outstanding.removeValue(forKey: id)?.respond(result)
    }

    /// Each check of `call`'s arguments, in order: an unknown argument, then each argument of
    /// the op (missing, of the wrong type, out of range).
    static func checkArguments(of call: OperationCall, for operation: ControlOperation) throws {
        if !operation.takesOtherArguments {
            try call.args.rejectUnknownKeys(allowed: operation.argumentNames)
        }
        for argument in operation.arguments { try argument.check(call.args) }
    }

    /// Answers every call still waiting with `error` (a stopping daemon); later answers are dropped.
    func failOutstanding(_ error: ControlError) {
        let waiting = outstanding
        outstanding.removeAll()
        for (_, responder) in waiting.sorted(by: { $0.key < $1.key }) { responder.respond(.failure(error)) }
    }

    /// A caller's answer function, kept in a struct: a function stored in a generic container
    /// as it is is wrapped in a thunk, an allocation on every call.
    private struct Responder {
        let respond: (Result<JSONObject, ControlError>) -> Void
    }

    private func find(_ name: String) throws -> ControlOperation {
        if let operation = byName[name] {
            guard operation.sides.includes(role) else {
                throw ControlError.control(.unknownOp, "\(name) is an op of the \(operation.sides.names.joined(separator: " and ")), not the \(role.name)")
            }
            return operation
        }
        throw ControlError.control(.unknownOp, "unknown op '\(name)' (known: \(operations.map(\.name).joined(separator: ", ")))")
    }
}

extension SessionError {
    /// The error as a control response carries it.
    public var controlError: ControlError {
        switch self {
        case .wc(let code, let message):
            return ControlError(domain: WCErrorCode.domain, code: code.rawValue, name: code.name, message: message)
        case .invalidArgument(let message):
            return .control(.invalidArgument, message)
        }
    }
}

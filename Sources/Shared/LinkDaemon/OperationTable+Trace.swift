import LinkControl
import LinkJSON

extension OperationTable {
    /// Runs `request` from `client` (``dispatch(_:client:respond:)``) and answers it, with the
    /// op in `tracer`: its entry is written only once it causes something (docs/trace.md),
    /// and a failed op leaves an error entry naming the failure. `trace.get` is never traced,
    /// or a follower reading the trace would fill it.
    func dispatch(_ request: ControlRequest, from client: ControlClientConnection, tracer: Tracer) {
        let id = request.id
        // The answer holds its client (not weakly: a weakly referenced object keeps a side table
        // that sends every retain and release of it down a slow path). A client gone by then is
        // closed, and a closed client writes nothing.
        guard request.op != "trace.get" else {
            return dispatch(request, client: client) { result in client.respond(id: id, result) }
        }
        let name = request.op
        tracer.withOp(name, client: client.serial) { op in
            dispatch(request, client: client) { [tracer] result in
                if case .failure(let error) = result, let op, let opEntry = tracer.number(of: op) {
                    var fields: JSONObject = [
                        "op": .string(name), "domain": .string(error.domain), "code": .int(Int64(error.code)),
                        "name": .string(error.name), "message": .string(TracePreview.clip(error.message)),
                        "opEntry": .int(Int64(opEntry)),
                    ]
                    // Answered later, with nothing else as its cause: the op.
                    if tracer.cause == nil { fields["cause"] = .int(Int64(opEntry)) }
                    tracer.record(.error, fields)
                }
                client.respond(id: id, result)
            }
        }
    }
}

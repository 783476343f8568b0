import LinkJSON

/// One request of the control protocol: `{"id": 7, "op": "message.send", "args": {...}}`.
public struct ControlRequest: Sendable, Hashable {
    /// The caller's id, a number or a string, echoed in the response.
    public var id: JSONValue
    /// The operation, e.g. `message.send`.
    public var op: String
    /// The operation's arguments; empty when the request had none.
    public var args: JSONObject

    public init(id: JSONValue, op: String, args: JSONObject = [:]) {
        self.id = id
        self.op = op
        self.args = args
    }

    /// The request as a JSON object.
    public var json: JSONValue {
        ["id": id, "op": .string(op), "args": .object(args)]
    }
}

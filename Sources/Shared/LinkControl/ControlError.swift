import LinkJSON

/// An error as a control response carries it: `{"domain", "code", "name", "message"}`.
///
/// Errors of the control protocol use domain ``controlDomain``; WatchConnectivity errors use
/// `"WCErrorDomain"` with codes 7001 to 7019.
public struct ControlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The domain of the control protocol's own errors.
    public static let controlDomain = "control"

    public var domain: String
    public var code: Int
    public var name: String
    public var message: String

    public init(domain: String, code: Int, name: String, message: String) {
        self.domain = domain
        self.code = code
        self.name = name
        self.message = message
    }

    /// An error of the control protocol itself.
    public static func control(_ name: ControlErrorName, _ message: String) -> ControlError {
        ControlError(domain: controlDomain, code: name.rawValue, name: name.name, message: message)
    }

    /// The error object of a response.
    public var json: JSONValue {
        ["domain": .string(domain), "code": .int(Int64(code)), "name": .string(name), "message": .string(message)]
    }

    /// Reads an error object of a response; `nil` when `domain`, `code` or `name` is missing or
    /// of the wrong type. A missing `message` reads as empty.
    public init?(json: JSONValue) {
        guard let domain = json["domain"]?.stringValue,
            let code = json["code"]?.intValue, let code = Int(exactly: code),
            let name = json["name"]?.stringValue
        else { return nil }
        let message = json["message"]
        if let message, message.stringValue == nil, !message.isNull { return nil }
        self.init(domain: domain, code: code, name: name, message: message?.stringValue ?? "")
    }

    /// `<domain> <code> <name>: <message>`.
    public var description: String { "\(domain) \(code) \(name): \(message)" }
}

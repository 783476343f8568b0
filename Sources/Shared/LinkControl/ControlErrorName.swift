/// The errors of the control protocol itself (domain `"control"`), with their codes.
public enum ControlErrorName: Int, Sendable, Hashable, CaseIterable {
    /// The line is not a valid request envelope.
    case badRequest = 1
    /// No operation has the requested name.
    case unknownOp = 2
    /// An argument is missing, unknown, of the wrong type or out of range.
    case invalidArgument = 3
    /// The request line is longer than the daemon accepts.
    case lineTooLong = 4
    /// The daemon failed in a way that is not the caller's fault.
    case internalError = 5
    /// The daemon is stopping and takes no new work.
    case shuttingDown = 6
    /// The daemon cannot take the request now; try again.
    case busy = 7

    /// The wire name, e.g. `badRequest`.
    public var name: String {
        switch self {
        case .badRequest: return "badRequest"
        case .unknownOp: return "unknownOp"
        case .invalidArgument: return "invalidArgument"
        case .lineTooLong: return "lineTooLong"
        case .internalError: return "internalError"
        case .shuttingDown: return "shuttingDown"
        case .busy: return "busy"
        }
    }
}

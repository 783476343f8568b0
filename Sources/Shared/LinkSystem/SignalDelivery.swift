/// How an event loop receives the signals it is asked to handle.
public enum SignalDelivery: String, CaseIterable, Sendable {
    /// Linux: the signals are blocked in the loop's thread and read from a signalfd. A
    /// handler that writes to a self-pipe is installed as well, for a signal that the kernel
    /// hands to another thread that does not block it.
    case signalDescriptor
    /// A `sigaction` handler writes the signal number to a non-blocking pipe that the loop
    /// watches. Works everywhere.
    case selfPipe

    /// ``signalDescriptor`` on Linux, ``selfPipe`` elsewhere.
    public static var `default`: SignalDelivery {
        #if os(Linux)
        return .signalDescriptor
        #else
        return .selfPipe
        #endif
    }

    /// Whether this delivery exists on the running platform.
    public var isAvailable: Bool {
        switch self {
        case .signalDescriptor:
            #if os(Linux)
            return true
            #else
            return false
            #endif
        case .selfPipe:
            return true
        }
    }
}

import LinkControl
import LinkJSON
import LinkSession
import WireProtocol

/// The app process attached to the daemon: its session's connection (`app.attach`) and, on the
/// watch, its WatchKit's (`watchKit.attach`); at most one of each at a time.
final class AppAttachment {
    private(set) var client: ControlClientConnection?
    private(set) var watchKit: ControlClientConnection?

    /// Whether a connection other than `client` is the app's WatchKit.
    func isWatchKitHeld(byAnotherThan client: ControlClientConnection) -> Bool {
        guard let attached = watchKit, attached.isOpen else { return false }
        return attached !== client
    }

    func attachWatchKit(_ client: ControlClientConnection) { watchKit = client }

    /// Forgets `client` if it was the app's WatchKit; true when it was.
    func detachWatchKit(_ client: ControlClientConnection) -> Bool {
        guard watchKit === client else { return false }
        watchKit = nil
        return true
    }

    /// Whether a connection other than `client` is the attached app.
    func isHeld(byAnotherThan client: ControlClientConnection?) -> Bool {
        guard let attached = self.client, attached.isOpen else { return false }
        return attached !== client
    }

    func attach(_ client: ControlClientConnection) { self.client = client }

    /// Forgets `client` if it was the attached app; true when it was.
    func detach(_ client: ControlClientConnection) -> Bool {
        guard self.client === client else { return false }
        self.client = nil
        return true
    }
}

/// The app side's ops: an app process attaches itself as the running app, acknowledges what
/// its delegate took, and declines a message it has no reply handler for.
struct AppOperations {
    let context: FeatureContext
    let attachment: AppAttachment
    let launcher: AppLauncher
    let subscribe: (ControlClientConnection) -> Void

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "app.attach", summary: "this connection is the running app: its state, its delegate's messages and deliveries",
                arguments: [
                    .optional("state", .string, "foreground (default) or background"),
                    .optional("handles", .array, "the delegate's message methods: " + AppHandles.names.map(\.0).joined(separator: ", ")),
                ]
            ) { call in
                guard let client = call.client else { throw ControlError.control(.internalError, "app.attach needs a connection") }
                let stateName = try call.args.optionalString("state") ?? "foreground"
                guard var state = AppState(name: stateName), state != .notRunning else {
                    throw call.args.invalid("'state' must be foreground or background; got '\(stateName)'")
                }
                let handles = try Self.handles(call)
                guard !attachment.isHeld(byAnotherThan: client) else {
                    throw ControlError.control(
                        .busy, "app.attach: an app is attached already (control connection #\(attachment.client?.serial ?? 0)); one app at a time")
                }
                // An app the OS launched runs in the state it was launched in, whatever it says.
                let launched = launcher.attached(.app)
                if let launched { state = launched }
                attachment.attach(client)
                subscribe(client)
                context.submit(.attachApp(state, handles, launchedByTheOS: launched != nil)) { result in
                    call.respond(
                        result.map { _ in
                            let status = context.status()
                            return [
                                "attached": true, "appState": .string(status.appState.name),
                                "activationState": .string(status.activationState.name), "isReachable": .bool(status.isReachable),
                            ]
                        }.mapError(\.controlError))
                }
            },
            ControlOperation(
                "app.acknowledge", summary: "the attached app's delegate returned for every item handed to it up to seq",
                arguments: [.required("seq", .integer(1...Int64.max))]
            ) { call in
                guard let client = call.client, attachment.client === client else {
                    throw call.args.invalid("only the attached app acknowledges deliveries (this connection did not app.attach)")
                }
                context.submit(.acknowledgeDelivery(upTo: UInt64(try call.args.int("seq"))), answering: call)
            },
            ControlOperation(
                "message.decline", summary: "the app has no reply handler for this message: its sender gets 7014",
                arguments: [.required("replyId", .integer(1...Int64.max))]
            ) { call in
                context.submit(.declineMessage(replyId: UInt64(try call.args.int("replyId"))), answering: call)
            },
        ]
    }

    private static func handles(_ call: OperationCall) throws -> AppHandles {
        guard call.args.contains("handles") else { return .all }
        var handles: AppHandles = []
        for value in try call.args.array("handles") {
            guard let name = value.stringValue, let handle = AppHandles.names.first(where: { $0.0 == name })?.1 else {
                throw call.args.invalid("'handles' takes the names \(AppHandles.names.map(\.0).joined(separator: ", ")); got \(value)")
            }
            handles.insert(handle)
        }
        return handles
    }
}

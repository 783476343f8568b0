import LinkControl
import LinkJSON
import LinkSession
import WireProtocol

/// The ops of the session itself: status, activation, the app's state, events, the op
/// table, shutdown.
struct SessionOperations {
    let context: FeatureContext
    let table: OperationTable
    let status: () -> JSONObject
    let subscribe: (ControlClientConnection) -> Void
    let app: AppAttachment
    let shutdown: () -> Void

    var operations: [ControlOperation] {
        [
            ControlOperation("status", summary: "the app's session, the link, the device flags, the watches and each feature's state") { call in
                call.succeed(status())
            },
            ControlOperation("session.activate", summary: "WCSession.activate(): activate the app's session") { call in
                context.submit(.activate, answering: call)
            },
            ControlOperation(
                "app.setState", summary: "the app's state, which decides reachability",
                arguments: [.required("state", .string, "foreground, background or notRunning")]
            ) { call in
                let name = try call.args.string("state")
                guard let state = AppState(name: name) else {
                    throw call.args.invalid("'state' must be one of foreground, background, notRunning; got '\(name)'")
                }
                guard !app.isHeld(byAnotherThan: call.client) else {
                    throw ControlError.control(.busy, "app.setState: an app is attached (control connection #\(app.client?.serial ?? 0)); its state follows it")
                }
                context.submit(.setAppState(state), answering: call)
            },
            ControlOperation(
                "workout.start", sides: .watch,
                summary: "a workout session starts (HKWorkoutSession.startActivity): the watch app stays reachable in the background"
            ) { call in
                context.submit(.setWorkout(true), answering: call)
            },
            ControlOperation("workout.end", sides: .watch, summary: "the workout session ends (HKWorkoutSession.end)") { call in
                context.submit(.setWorkout(false), answering: call)
            },
            ControlOperation("events.subscribe", summary: "turn this connection into a stream of events") { call in
                guard let client = call.client else { throw ControlError.control(.internalError, "events.subscribe needs a connection") }
                subscribe(client)
                call.succeed(["subscribed": true])
            },
            ControlOperation("ops.list", summary: "every op of this side, with its arguments and a summary") { call in
                call.succeed(table.listing)
            },
            ControlOperation("shutdown", summary: "stop the daemon, as SIGTERM does") { call in
                call.succeed(["stopping": true])
                context.logger.info("shutdown requested over the control socket")
                context.loop.execute { shutdown() }
            },
        ]
    }
}

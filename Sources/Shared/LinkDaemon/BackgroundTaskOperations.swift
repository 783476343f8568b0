import LinkControl
import LinkJSON
import LinkSession
import WireProtocol

/// The watch app's WatchKit ops (docs/app-side.md, "The watch app's background life"): the
/// app's WatchKit attaches itself and is handed the app's background tasks, completes them and
/// schedules refresh tasks, as WatchKit does with watchOS.
struct BackgroundTaskOperations {
    let context: FeatureContext
    let attachment: AppAttachment
    let launcher: AppLauncher
    let subscribe: (ControlClientConnection) -> Void

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "watchKit.attach", sides: .watch,
                summary: "this connection is the running app's WatchKit: its background tasks and life-cycle events",
                arguments: [.optional("state", .string, "foreground (default) or background, for an app this OS did not launch")]
            ) { call in
                guard let client = call.client else { throw ControlError.control(.internalError, "watchKit.attach needs a connection") }
                let stateName = try call.args.optionalString("state") ?? "foreground"
                guard var state = AppState(name: stateName), state != .notRunning else {
                    throw call.args.invalid("'state' must be foreground or background; got '\(stateName)'")
                }
                guard !attachment.isWatchKitHeld(byAnotherThan: client) else {
                    throw ControlError.control(
                        .busy,
                        "watchKit.attach: the app's WatchKit is attached already (control connection #\(attachment.watchKit?.serial ?? 0)); one app at a time")
                }
                // An app the OS launched runs in the state it was launched in, whatever it says.
                let launched = launcher.attached(.app)
                if let launched { state = launched }
                attachment.attachWatchKit(client)
                subscribe(client)
                context.submit(.attachWatchKit(state, launchedByTheOS: launched != nil)) { result in
                    call.respond(
                        result.map { _ in
                            var answer: JSONObject = ["attached": true, "appState": .string(context.status().appState.name)]
                            if launched != nil, let launch = launcher.launch(of: .app) { answer["launchReason"] = .string(launch.reason.rawValue) }
                            return answer
                        }.mapError(\.controlError))
                }
            },
            ControlOperation(
                "backgroundTask.complete", sides: .watch,
                summary: "the app completed a background task (setTaskCompletedWithSnapshot); with none open it is suspended",
                arguments: [
                    .required("taskId", .integer(1...Int64.max)),
                    .optional("snapshot", .bool, "whether the app asked for a new snapshot (no effect: nothing is drawn)"),
                ]
            ) { call in
                context.submit(.completeBackgroundTask(id: UInt64(try call.args.int("taskId"))), answering: call)
            },
            ControlOperation(
                "backgroundTask.schedule", sides: .watch,
                summary: "schedule a background app refresh or snapshot refresh task, replacing the one of its kind",
                arguments: [
                    .required("kind", .string, "applicationRefresh or snapshot"),
                    .optional("preferredDate", .number(nil), "seconds since 1970 on the device's clock: due at, not before, this date"),
                    .optional("inMs", .integer(0...Int64.max), "or: due this many milliseconds of device time from now"),
                    .optional("userInfo", .object, "handed back with the task"),
                ]
            ) { call in
                let name = try call.args.string("kind")
                guard let kind = BackgroundTaskKind(rawValue: name), kind != .watchConnectivity else {
                    throw call.args.invalid("'kind' is applicationRefresh or snapshot; got '\(name)'")
                }
                let given = try call.args.optionalDouble("preferredDate")
                let delay = try call.args.optionalInt("inMs", range: 0...Int64.max)
                guard (given == nil) != (delay == nil) else {
                    throw call.args.invalid("give 'preferredDate' (seconds since 1970) or 'inMs' (from now), one of them")
                }
                let userInfo = try call.args.optionalObject("userInfo").map { JSON.serialize(.object($0)) }.map { Array($0.utf8) }
                if let delay { return context.submit(.scheduleBackgroundTaskAfter(kind, milliseconds: delay, userInfo: userInfo), answering: call) }
                let date = given ?? 0
                guard date.isFinite else { throw call.args.invalid("'preferredDate' must be a finite number of seconds since 1970") }
                context.submit(.scheduleBackgroundTask(kind, preferredDate: date, userInfo: userInfo), answering: call)
            },
        ]
    }
}

import LinkJSON
import LinkSession

/// The daemon's ops: each group of the op table gets the parts it drives, and the features
/// their ``FeatureContext``.
extension Daemon {
    func registerOperations() {
        let context = featureContext
        table.register(
            SessionOperations(
                context: context, table: table,
                status: { [unowned self] in
                    StatusReport.make(
                        role: self.role, deviceId: self.home.deviceId, directory: self.directory,
                        link: self.link, launcher: self.launcher, features: self.features,
                        clock: self.clock, now: self.loop.nowMilliseconds)
                },
                subscribe: { [unowned self] in self.control.subscribe($0) },
                app: app,
                shutdown: { [unowned self] in self.stop() }
            ).operations)
        table.register(DeviceOperations(context: context, directory: directory, link: link).operations)
        table.register(WeatherOperations(context: context, directory: directory).operations)
        table.register(
            AppOperations(
                context: context, attachment: app, launcher: launcher,
                subscribe: { [unowned self] in self.control.subscribe($0) }
            ).operations)
        table.register(AppLaunchOperations(context: context, launcher: launcher).operations)
        table.register(
            BackgroundTaskOperations(
                context: context, attachment: app, launcher: launcher,
                subscribe: { [unowned self] in self.control.subscribe($0) }
            ).operations)
        table.register(MessageOperations(context: context, directory: directory).operations)
        table.register(QueuedOperations(context: context).operations)
        table.register(FileOperations(context: context).operations)
        table.register(TraceOperations(tracer: tracer, follow: { [unowned self] in self.control.followTrace($0) }).operations)
        table.register(ClockOperations(clock: clock).operations)
        for feature in features { table.register(feature.operations) }
    }

    var featureContext: FeatureContext {
        // The gateway is captured itself (it holds no feature), not reached through an
        // unowned daemon: a feature submits at every message it sends.
        let gateway = gateway
        return FeatureContext(
            role: role, loop: loop, logger: logger, home: options.home, stateDirectory: options.stateDirectory,
            options: options.featureOptions,
            publish: { [unowned self] in self.control.publish($0, $1) },
            hasEventSubscribers: { [unowned self] in self.control.hasSubscribers },
            submit: { gateway.submit($0, completion: $1) },
            status: { [unowned self] in self.directory.session.status() },
            apps: launcher,
            sendEvent: { [unowned self] in self.control.sendEvent($0, $1, toClient: $2) },
            traceFault: { [unowned self] in _ = self.tracer.record(.fault, $0) },
            stateWriteFailed: stateWriteFailed)
    }
}

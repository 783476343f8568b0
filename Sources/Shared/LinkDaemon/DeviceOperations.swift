import LinkControl
import LinkJSON
import LinkSession
import WireProtocol

/// The ops that change the emulated devices and their faults: device flags, the active
/// watch, the link.
struct DeviceOperations {
    let context: FeatureContext
    let directory: PeerDirectory
    let link: LinkEndpoint

    var operations: [ControlOperation] {
        let flags = DeviceFlagName.owned(by: context.role)
        return [
            ControlOperation(
                "device.set", summary: "the device flags of this side (phone: paired, watch app, complication; watch: companion app)",
                arguments: flags.map { .optional($0.rawValue, .bool) }
            ) { call in
                var changes: [DeviceFlagName: Bool] = [:]
                for flag in flags where call.args.contains(flag.rawValue) { changes[flag] = try call.args.bool(flag.rawValue) }
                guard !changes.isEmpty else {
                    throw call.args.invalid("give at least one flag (\(flags.map(\.rawValue).joined(separator: ", ")))")
                }
                context.submit(.setDeviceFlags(changes), answering: call)
            },
            ControlOperation(
                "device.switchWatch", sides: .phone, summary: "make another paired watch the active one (quick watch switching)",
                arguments: [.required("deviceId", .string, "the device id of a paired watch")]
            ) { call in
                let deviceId = try call.args.string("deviceId")
                guard !deviceId.isEmpty else {
                    throw call.args.invalid("'deviceId' is empty; give the device id of a paired watch (status: pairedWatches)")
                }
                call.succeed(try directory.switchWatch(to: deviceId))
            },
            ControlOperation(
                "link.set", summary: "take the emulated link down or up, and set its latency",
                arguments: [.optional("up", .bool), .optional("latencyMs", .integer(0...60_000))]
            ) { call in
                let up = try call.args.optionalBool("up")
                let latency = try call.args.optionalInt("latencyMs")
                guard up != nil || latency != nil else {
                    throw call.args.invalid("give 'up' (bool) and/or 'latencyMs' (0 to 60000)")
                }
                link.set(up: up, latency: latency)
                call.succeed([
                    "up": .bool(link.isEnabled), "latencyMs": .int(link.latencyMilliseconds),
                    "connected": .bool(directory.session.isLinkUp),
                ])
            },
        ]
    }
}

import LinkControl
import LinkJSON
import LinkSession
import WireProtocol

/// What `status` answers: the app's session, the link, the device flags, the watches (phoned)
/// and each feature's fields.
enum StatusReport {
    static func make(
        role: Role, deviceId: String, directory: PeerDirectory, link: LinkEndpoint,
        launcher: AppLauncher, features: [DaemonFeature], clock: PairClock, now: Int64
    ) -> JSONObject {
        let session = directory.session
        let status = session.status()
        var linkObject: JSONObject = [
            "connected": .bool(status.linkConnected), "up": .bool(link.isEnabled),
            "latencyMs": .int(link.latencyMilliseconds),
        ]
        if let peer = directory.appPeer.channel?.peer { linkObject["peerDeviceId"] = .string(peer.deviceId) }
        var result: JSONObject = [
            "role": .string(role.name),
            "version": .string(DaemonOptions.version),
            "deviceId": .string(deviceId),
            "activationState": .string(status.activationState.name),
            "isReachable": .bool(status.isReachable),
            "appState": .string(status.appState.name),
            "link": .object(linkObject),
            "hasContentPending": .bool(status.hasContentPending),
            "clock": .object(clock.json),
        ]
        for flag in DeviceFlagName.owned(by: role) {
            result[flag.rawValue] = .bool(status.flags.contains(flag.flag))
        }
        result["outstandingUserInfoTransfers"] = .int(Int64(status.outstandingUserInfoTransfers))
        result["outstandingFileTransfers"] = .int(Int64(status.outstandingFileTransfers))
        if let remaining = status.remainingComplicationUserInfoTransfers {
            result["remainingComplicationUserInfoTransfers"] = .int(Int64(remaining))
        }
        if !status.isReachable {
            result["unreachableReason"] = .string(
                session.isReachable
                    ? "reachable in fact; the app has not been told yet (device weather: status.weather)" : session.unreachableReason)
        }
        result["weather"] = .object(ControlRendering.render(session.weatherStatus(now: now)))
        result["replyMode"] = .string(session.replies.mode.rawValue)
        result["apps"] = .object(launcher.status)
        if role == .watch { result["workoutRunning"] = .bool(session.workoutRunning) }
        if let background = session.backgroundTaskStatus(now: now) {
            result["backgroundTasks"] = .object(ControlRendering.render(background))
        }
        if role == .phone { directory.addWatchStatus(to: &result) }
        for feature in features { feature.addStatus(to: &result) }
        return result
    }
}

import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import LinkSystem
import WireProtocol

/// phoned with several watches: pairing each watch that links with the key, the active
/// watch, and quick watch switching (`device.switchWatch`).
///
/// Each paired watch has its own session and store (`phone/phone.db` for the first watch,
/// `phone/watches/<name>/phone.db` for the others), so what is queued for a watch goes to
/// that watch only, and only while it is the active watch. The app works with one session at
/// a time (`appPeer`): the active watch's, or while a switch is under way the previous
/// watch's, which is inactive until what it received is delivered (or a short while has
/// passed) and then deactivates; the app's next `session.activate` is with the new watch.
extension PeerDirectory {
    var pairedWatchesPath: String { options.stateDirectory + "/" + PairedWatches.fileName }

    /// Where a watch's database and files are: `directory` below the phone's state
    /// directory, or (`""`) the state directory itself.
    func peerDirectory(_ directory: String) -> String {
        directory.isEmpty ? options.stateDirectory : options.stateDirectory + "/" + directory
    }

    func loadPairedWatches() throws -> PairedWatches {
        let path = pairedWatchesPath
        guard FileSystem.fileExists(path) else { return PairedWatches() }
        let bytes: [UInt8]
        do { bytes = try FileSystem.readFile(path) } catch {
            throw StartupError("cannot read the paired watches: \(error)")
        }
        do { return try PairedWatches.decode(bytes, path: path) } catch {
            throw StartupError("\(error)")
        }
    }

    private func save(_ watches: PairedWatches) throws {
        do { try FileSystem.writeFileAtomically(pairedWatchesPath, watches.encoded(), mode: 0o600) } catch {
            stateWriteFailed(pairedWatchesPath, error)
            throw error
        }
    }

    /// The peer of a counterpart that completed the handshake: on phoned the watch's, pairing
    /// a watch that links for the first time (the first one takes over what the app queued
    /// before any watch linked, and becomes the active watch).
    func peer(for hello: Hello) throws -> PeerSession {
        guard role == .phone else { return appPeer }
        if let known = peers.first(where: { $0.deviceId == hello.deviceId }) { return known }
        var updated = pairedWatches
        guard case .added(let watch) = updated.admit(hello.deviceId) else {
            throw StartupError("the phone has \(PairedWatches.maximumCount) watches paired, as many as it keeps; refused watch '\(hello.deviceId)'")
        }
        let peer: PeerSession
        let isNew: Bool
        if watch.directory.isEmpty, let waiting = peers.first(where: { $0.deviceId == nil }) {
            peer = waiting
            isNew = false
        } else {
            peer = makePeer()
            isNew = true
            do {
                try FileSystem.ensurePrivateDirectory(peerDirectory(watch.directory))
            } catch {
                throw StartupError("cannot pair watch '\(hello.deviceId)': \(error)")
            }
            try openStore(of: peer, in: peerDirectory(watch.directory))
        }
        do {
            try save(updated)
        } catch {
            if isNew { peer.store?.close() }
            throw StartupError("cannot pair watch '\(hello.deviceId)': cannot record it in \(pairedWatchesPath): \(error)")
        }
        pairedWatches = updated
        peer.deviceId = hello.deviceId
        let active = updated.activeDeviceId == hello.deviceId
        if isNew {
            add(peer)
            committer.perform(peer.session.adoptSettings(from: appPeer.session), from: peer)
            committer.perform(peer.session.setActiveWatch(active, now: loop.turnMilliseconds), from: peer)
        }
        logger.info(
            "paired with watch '\(hello.deviceId)'\(active ? "; it is the active watch" : " (\(watch.directory)); the active watch is '\(updated.activeDeviceId ?? "")'")"
        )
        committer.tracer.record(.state, ["name": "paired", "peer": .string(hello.deviceId), "isActive": .bool(active)])
        return peer
    }

    /// `device.switchWatch`: makes a paired watch the active one. An activated app session
    /// becomes inactive and deactivates once its watch has everything; a session that is not
    /// activated moves to the new watch at once.
    func switchWatch(to deviceId: String) throws -> JSONObject {
        var updated = pairedWatches
        let outcome = try updated.switchTo(deviceId).get()
        var result: JSONObject = ["activeWatchDeviceId": .string(deviceId)]
        if case .switched(let previous) = outcome {
            do { try save(updated) } catch {
                throw SessionError.wc(.genericError, "cannot record the active watch in \(pairedWatchesPath): \(error)")
            }
            pairedWatches = updated
            logger.info("switched to watch '\(deviceId)' (from \(previous.map { "'\($0)'" } ?? "none"))")
            committer.tracer.record(.state, ["name": "activeWatch", "value": .string(deviceId), "previous": previous.map { .string($0) } ?? .null])
            // The app's session becomes inactive first: when the switch is back to its own
            // watch (before it deactivated), that watch is the active one again below.
            let app = appPeer
            committer.perform(app.session.becomeInactive(now: loop.turnMilliseconds), from: app)
            // Only the active watch's queue goes out; what waits for another watch stays stored
            // for it. An activated session follows the active watch once it has deactivated
            // (`perform`).
            for peer in peers {
                committer.perform(peer.session.setActiveWatch(peer.deviceId == deviceId, now: loop.turnMilliseconds), from: peer)
            }
            if let previous { result["previousWatchDeviceId"] = .string(previous) }
            result["switched"] = true
        } else {
            result["switched"] = false
        }
        result["activationState"] = .string(session.activationState.name)
        return result
    }

    /// Moves the app's session to the active watch once the current one is not activated.
    func followActiveWatch() {
        guard role == .phone, let id = pairedWatches.activeDeviceId,
            let target = peers.first(where: { $0.deviceId == id }), target !== appPeer,
            appPeer.session.activationState == .notActivated
        else { return }
        formerAppPeer = appPeer
        appPeer = target
        logger.info("session: the app's session is now with watch '\(id)'")
        committer.tracer.record(.state, ["name": "sessionWatch", "value": .string(id)])
    }

    /// Moves the app's session to the active watch once the current one is not activated
    /// (after a switch the session deactivates when its watch has everything).
    func followActiveWatchIfDeactivated(_ peer: PeerSession) {
        if peer.session.activationState == .notActivated, role == .phone, peer === appPeer,
            peer.deviceId != pairedWatches.activeDeviceId
        {
            followActiveWatch()
        }
    }

    /// The app's state, the device flags and the reply behaviour belong to the phone, not to
    /// one watch: every watch's session takes those of the app's session `app`.
    func shareSettings(of app: PeerSession) {
        for peer in peers where peer !== app {
            committer.perform(peer.session.adoptSettings(from: app.session), from: peer)
        }
    }

    /// `weather.set`: the weather is the device's, so every session takes it, and a session
    /// made later (a watch paired anew) starts with it.
    func setWeather(_ weather: ReachabilityWeather) {
        setConfiguredWeather(weather)
        for peer in peers {
            committer.perform(peer.session.setWeather(weather, now: loop.turnMilliseconds), from: peer)
        }
    }

    /// Where the app's directories for the watches are (`watchDirectoryURL`).
    var appWatchDirectoriesPath: String { options.home + "/phone-app/Watches" }

    /// The phone's flags changed (`device.set`): an uninstalled watch app (for the watch of the
    /// app's session) or an unpaired watch (every watch) makes the app's directory for that
    /// watch a new one; the library deletes the old one at the app's next launch ("This
    /// directory will be deleted upon next launch if the watch app is uninstalled for the
    /// selected Watch, or that Watch is unpaired", `WCSession.h`, `watchDirectoryURL`).
    func watchFlagsChanged(to flags: DeviceFlags) {
        let before = lastWatchFlags
        lastWatchFlags = flags
        var updated = pairedWatches
        if before.contains(.isPaired), !flags.contains(.isPaired) {
            for watch in updated.watches { updated.renewAppDirectory(of: watch.deviceId) }
        } else if before.contains(.isWatchAppInstalled), !flags.contains(.isWatchAppInstalled), let id = appPeer.deviceId {
            updated.renewAppDirectory(of: id)
        }
        guard updated != pairedWatches else { return }
        do {
            try save(updated)
            pairedWatches = updated
        } catch {
            logger.error("the app's watch directories stay as they were: \(error)")
        }
    }

    /// The app's directory for the watch of its session (`watchDirectoryURL`), while a watch is
    /// paired and the watch app installed on it; else null. (The library gives none before
    /// the session is activated: "the URL in this directory is undefined", `watchDirectoryURL`.)
    var appWatchDirectory: JSONValue {
        let flags = session.flags
        guard flags.contains(.isPaired), flags.contains(.isWatchAppInstalled), let id = appPeer.deviceId,
            let watch = pairedWatches.watch(id)
        else { return .null }
        return .string(appWatchDirectoriesPath + "/" + watch.appDirectoryName)
    }

    func addWatchStatus(to result: inout JSONObject) {
        // The app's directories: the one of the session's watch, and those to keep at the
        // app's next launch (every paired watch's, but the session watch's while its watch app
        // is not installed).
        let flags = session.flags
        var kept: [JSONValue] = []
        if flags.contains(.isPaired) {
            for watch in pairedWatches.watches where watch.deviceId != appPeer.deviceId || flags.contains(.isWatchAppInstalled) {
                kept.append(.string(appWatchDirectoriesPath + "/" + watch.appDirectoryName))
            }
        }
        result["watchDirectory"] = appWatchDirectory
        result["watchDirectories"] = .array(kept)
        result["activeWatchDeviceId"] = pairedWatches.activeDeviceId.map { .string($0) } ?? .null
        result["sessionWatchDeviceId"] = appPeer.deviceId.map { .string($0) } ?? .null
        result["pairedWatches"] = .array(
            peers.compactMap { peer in
                guard let id = peer.deviceId else { return nil }
                let status = peer.session.status()
                return .object([
                    "deviceId": .string(id),
                    "isActive": .bool(id == pairedWatches.activeDeviceId),
                    "isConnected": .bool(status.linkConnected),
                    "activationState": .string(status.activationState.name),
                    "isReachable": .bool(status.isReachable),
                    "outstandingUserInfoTransfers": .int(Int64(status.outstandingUserInfoTransfers)),
                    "hasContentPending": .bool(status.hasContentPending),
                ])
            })
    }
}

import LinkStore
import WireProtocol

/// An app process attached to this side (`app.attach`): the app half of WatchConnectivity,
/// running against the daemon as an app runs against the system's daemon.
///
/// While an app is attached, `appState` is its state and closing its connection makes it
/// `notRunning`. Messages go to its delegate methods: one that wants a reply waits for the
/// app's reply handler (`message.reply`), whatever `replies.set` says, and one for a method
/// the app does not have fails on the sender with 7014. Received queued items (userInfo,
/// contexts, files) are handed to the app in order and count as delivered only once the app
/// acknowledges them, after its delegate method returned: until then they stay in the store
/// as undelivered, so an app killed before it acknowledged gets them again at its next attach.
/// Delivered means "the app's delegate returned", the moment Apple's framework considers a
/// transfer done on the receiving side.
extension LinkSession {
    func attachApp(state: AppState, handles: AppHandles, launchedByTheOS: Bool, token: RequestToken, now: Int64) {
        setAttachedApp(handles)
        if launchedByTheOS { background.launchedByTheOS = true }
        launchEnded()
        changeAppState(to: state)
        actions.append(.respond(token, .success(.appState(appState))))
        deliverPending()
        deliverHeldMessages(now: now)
    }

    func detachApp(token: RequestToken) {
        failTheAppsUnansweredMessages()
        failHeldMessages(.deliveryFailed, "the phone app quit before it activated its session")
        setAttachedApp(nil)
        // The process runs on while its WatchKit is attached.
        if !background.watchKitAttached { changeAppState(to: .notRunning) }
        actions.append(.respond(token, .success(.appState(appState))))
    }

    /// Every attachment starts afresh: what was handed to a previous app process and not
    /// acknowledged is handed again.
    func setAttachedApp(_ handles: AppHandles?) {
        attachedApp = handles
        handedUpTo = 0
        transfersOfTheAttachedApp.removeAll()
    }

    func changeAppState(to state: AppState) {
        guard state != appState else { return }
        appState = state
        actions.append(.notify(.appStateDidChange(state)))
        if state == .notRunning, workoutRunning {
            // A workout session is the running app's.
            workoutRunning = false
            actions.append(.notify(.workoutStateDidChange(false)))
        }
        stateChanged()
        backgroundAppStateChanged(to: state)
        deliverPending()
    }

    /// Hands the attached app what it has not been handed yet, in order. Items for a framework
    /// on this side (PowerAuth) are not the app's: they are delivered at once.
    func handPendingToApp() {
        // `undelivered` is in seq order and holds what was handed and not yet acknowledged:
        // start after the handed prefix rather than walk it for every item that arrives.
        var low = 0, high = undelivered.count
        while low < high {
            let middle = (low + high) / 2
            if undelivered[middle].seq <= handedUpTo { low = middle + 1 } else { high = middle }
        }
        // The app's transfers that finished while it was not running go in the same `seq` order.
        var finished = finishedWhileAway.last.map { $0.seq > handedUpTo } == true ? finishedWhileAway.firstIndex { $0.seq > handedUpTo } : nil
        guard low < undelivered.count || finished != nil else { return }
        var frameworkItems = false
        for item in undelivered[low...] {
            while let index = finished, finishedWhileAway[index].seq < item.seq {
                notifyFinishedWhileAway(finishedWhileAway[index])
                handedUpTo = finishedWhileAway[index].seq
                finished = index + 1 < finishedWhileAway.count ? index + 1 : nil
            }
            if item.channel == .userInfo, item.flags.contains(.system) {
                markDelivered(item)
                frameworkItems = true
            }
            notifyDelivery(item)
            handedUpTo = item.seq
        }
        while let index = finished {
            notifyFinishedWhileAway(finishedWhileAway[index])
            handedUpTo = finishedWhileAway[index].seq
            finished = index + 1 < finishedWhileAway.count ? index + 1 : nil
        }
        // A framework's item is delivered once handed (and an earlier one was removed then).
        if frameworkItems {
            undelivered.removeAll { $0.channel == .userInfo && $0.flags.contains(.system) && $0.seq <= handedUpTo }
        }
    }

    /// `app.acknowledge`: the app's delegate returned for every item handed to it up to `seq`.
    /// A received file the app did not move out of the inbox is removed, as WatchConnectivity
    /// removes it "when this delegate method returns".
    func acknowledgeDelivery(upTo seq: UInt64, token: RequestToken) {
        guard attachedApp != nil else {
            actions.append(.respond(token, .failure(.invalidArgument("app.acknowledge: no app is attached"))))
            return
        }
        let limit = min(seq, handedUpTo)
        var count = 0
        while count < undelivered.count, undelivered[count].seq <= limit {
            let item = undelivered[count]
            markDelivered(item)
            if item.channel == .file, let file = ReceivedFile(seq: item.seq, payload: item.payload) {
                actions.append(.file(.removeFile(path: file.path)))
            }
            count += 1
        }
        undelivered.removeFirst(count)
        finishedWhileAwayAcknowledged(upTo: limit)
        actions.append(.respond(token, .success(.empty)))
    }
}

/// Counters of rare states the worlds reached ("sometimes" assertions): a state never reached
/// over a run is a state the run did not test.
package final class SimCoverage {
    package enum Mark: String, CaseIterable {
        case crashBeforeCommit = "crash before a commit"
        case crashAfterCommitBeforeRelease = "crash between a commit and what waited for it"
        case kill = "SIGKILL"
        case powerCut = "power cut"
        case partition = "partition"
        case cutMidFile = "cut with a file chunk in flight"
        case storeFull = "ENOSPC on a store call"
        case storeIOError = "EIO on a store call"
        case refusedForFullDisk = "ITEM_ERROR 7015 sent: no room at the receiver"
        case itemErrorReceived = "ITEM_ERROR received"
        case contextReplacedInFlight = "context replaced while one was in flight"
        case fileResumed = "file resumed after a committed offset"
        case severalFramesInOneCommit = "several frames in one turn's commit"
        case appsAttached = "worlds with app processes attaching and quitting"
        case appQuitWithItemsHanded = "app quit with items handed and not acknowledged"
        case appQuitAwaitingReply = "app quit with a message waiting for its reply"
        case finishedToldAtLaunch = "didFinish told to the next app process (finished while none ran)"
        case itemsInFlightLimit = "2,048 userInfo ITEMs on the link without an ACK (the shipped limit)"
        case fileWindowFull = "4 MiB of a file on the link not yet written (the shipped window)"
        case fileRejected = "a file given up after 3 mismatched checks"
        case receivedListFull = "received.list past its 1,000 messages"
        case receivedListBytesFull = "received.list past its 256 KiB of payload"
        case watchSwitch = "the phone switched to another watch"
        case switchWithMessagesAwaitingReplies = "a switch with messages waiting for their replies"
        case inactiveDeliveryEnded = "an inactive session deactivated at the end of its 2 s"
        case pairedWatchesFull = "a watch refused: 16 paired"
        case watchAppLaunched = "watch app launched by its OS"
        case watchAppSuspended = "watch app suspended, its tasks completed"
        case watchComplicationWake = "watch app woken at once by a complication userInfo"
        case expirationHandlerCalled = "background tasks' expirationHandler called"
        case watchdogKill = "watch app ended by the watchdog at its budget"
        case runDeferredByAllowance = "background run for data deferred by the hourly allowance"
        case scheduledTaskRan = "scheduled refresh or snapshot task handed"
        case scheduledTaskInForeground = "scheduled task due while the app ran in the foreground (ignored)"
        case watchWorldsOverAnHour = "worlds of over an hour with an installed watch app"
        case reportLagged = "reachability told after a lag (device weather)"
        case flipInsideTheLag = "reachability flipped back inside the lag (never told)"
        case refusedWhileTheAppReadReachable = "sendMessage refused (7007) while the app read isReachable true"
        case sentWhileTheAppReadUnreachable = "sendMessage sent while the app read isReachable false"
        case spell = "wrist-down or screen-off spell"
        case spellDuringAMessage = "spell while a message awaited its outcome"
        case workoutThroughASpell = "a workout kept the watch reachable through a spell"
        case watchMessageToAPhoneAppNotRunning = "watch message sent while the phone app was not running"
        case onSQLite = "worlds on SQLite"
        case powerCutLostWALFrames = "power cut with unsynced WAL frames"
        case powerCutAfterCreation = "power cut in the process that created the database"
        case storeDidNotOpen = "start failed: the store did not open (EIO)"
    }

    /// The first spell of each weather seed, across the worlds of a run.
    package let spellSeeds = SimSpellSeeds()

    private var counts: [Int]

    package init() { counts = Array(repeating: 0, count: Mark.allCases.count) }

    func count(_ mark: Mark) { counts[Mark.allCases.firstIndex(of: mark)!] += 1 }

    package func count(of mark: Mark) -> Int { counts[Mark.allCases.firstIndex(of: mark)!] }

    package func add(_ other: SimCoverage) {
        for index in counts.indices { counts[index] += other.counts[index] }
    }
}

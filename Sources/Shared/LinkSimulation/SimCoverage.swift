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
        case onSQLite = "worlds on SQLite"
        case powerCutLostWALFrames = "power cut with unsynced WAL frames"
        case powerCutAfterCreation = "power cut in the process that created the database"
        case storeDidNotOpen = "start failed: the store did not open (EIO)"
    }

    private var counts: [Int]

    package init() { counts = Array(repeating: 0, count: Mark.allCases.count) }

    func count(_ mark: Mark) { counts[Mark.allCases.firstIndex(of: mark)!] += 1 }

    package func count(of mark: Mark) -> Int { counts[Mark.allCases.firstIndex(of: mark)!] }

    package func add(_ other: SimCoverage) {
        for index in counts.indices { counts[index] += other.counts[index] }
    }
}

import LinkControl
import LinkJSON
import LinkRuntime
import LinkSession
import LinkStore
import WireProtocol

/// The counterparts of the daemon and their durable state: the phone on watchd; on phoned
/// each paired watch (and, until the first watch links, the app's queue that it will take
/// over). Each peer has its own `LinkSession`, store and files; the app works with one of
/// them, `appPeer`.
final class PeerDirectory {
    let role: Role
    let options: DaemonOptions
    let logger: Logger
    let loop: EventLoop
    /// Set by the daemon before anything runs: performs the actions of a peer's session.
    unowned var committer: TurnCommitter!
    private(set) var configuration: LinkSession.Configuration
    private let receivedSequence = ReceivedSequence()

    private(set) var peers: [PeerSession] = []
    /// The peer whose session the app works with (control ops, features): the active
    /// watch's, or during a switch the previous watch's until that session deactivates.
    var appPeer: PeerSession
    /// The app's previous session during the turn it moved to the active watch: what it
    /// reported before it deactivated still reaches the app.
    var formerAppPeer: PeerSession?
    /// Reports `watches.json` not written (``StoreFailureRecovery/stateWriteFailed(_:_:)``).
    var stateWriteFailed: (String, Error) -> Void = { _, _ in }
    /// The trace entry that caused each copy into an outbox, for what its end sets off.
    var copyCauses: [RequestToken: Tracer.Cause] = [:]
    /// phoned: the paired watches and the active one.
    var pairedWatches = PairedWatches()
    /// The phone's flags as last seen (``watchFlagsChanged(to:)``); a phone starts paired, with
    /// the watch app installed.
    var lastWatchFlags: DeviceFlags = [.isPaired, .isWatchAppInstalled]

    static let keptReceivedItems = 10_000
    static let prunePeriod = 1_000

    /// The weather sessions made from now on start with (`weather.set`).
    func setConfiguredWeather(_ weather: ReachabilityWeather) { configuration.weather = weather }

    init(options: DaemonOptions, logger: Logger, loop: EventLoop, configuration: LinkSession.Configuration) {
        role = options.role
        self.options = options
        self.logger = logger
        self.loop = loop
        self.configuration = configuration
        appPeer = PeerSession(deviceId: nil, session: LinkSession(configuration: configuration, receivedSequence: receivedSequence))
    }

    /// The app's session.
    var session: LinkSession { appPeer.session }

    func makePeer() -> PeerSession {
        PeerSession(deviceId: nil, session: LinkSession(configuration: configuration, receivedSequence: receivedSequence))
    }

    func add(_ peer: PeerSession) { peers.append(peer) }

    /// Opens every peer's store: watchd's one; on phoned one a paired watch.
    func openStores() throws {
        guard role == .phone else {
            try openStore(of: appPeer, in: options.stateDirectory)
            peers = [appPeer]
            return
        }
        pairedWatches = try loadPairedWatches()
        guard !pairedWatches.watches.isEmpty else {
            try openStore(of: appPeer, in: peerDirectory(""))
            peers = [appPeer]
            return
        }
        for watch in pairedWatches.watches {
            let peer = watch.deviceId == pairedWatches.activeDeviceId ? appPeer : makePeer()
            peer.deviceId = watch.deviceId
            try openStore(of: peer, in: peerDirectory(watch.directory))
            let actions = peer.session.setActiveWatch(watch.deviceId == pairedWatches.activeDeviceId, now: loop.nowMilliseconds)
            assert(actions.isEmpty, "no link is up while the stores open: nothing to send")
            peers.append(peer)
        }
    }

    /// Opens the store of `peer` in `directory` (`phone.db` or `watch.db`) and its files below
    /// `directory/files`.
    func openStore(of peer: PeerSession, in directory: String) throws {
        do {
            let store = try DeliveryStore(path: directory + (role == .phone ? "/phone.db" : "/watch.db"))
            var state = try store.load()
            try startFileTransfers(&state, of: peer, directory: directory + "/files")
            peer.session.restore(state)
            try store.pruneDelivered(keeping: Self.keptReceivedItems)
            peer.store = store
        } catch {
            throw StartupError("cannot use the database: \(error)")
        }
    }

    /// Reloads what is committed after `peer`'s turn was rolled back.
    func reloadCommittedState(of peer: PeerSession) throws {
        guard let store = peer.store else { return }
        var state = try store.load()
        if let files = peer.files {
            files.reset()
            try files.recover(&state, removingOrphans: false)
        }
        peer.session.restore(state)
    }

    /// Commits what is open and closes every store (the daemon stops).
    func closeStores() {
        for peer in peers {
            guard let store = peer.store else { continue }
            if store.inTransaction {
                do { try store.commit() } catch { store.rollback() }
            }
            store.close()
            peer.store = nil
        }
    }

    /// Keeps the newest received items in the database and forgets older ones now and then.
    func noteDelivery(_ peer: PeerSession) {
        peer.deliveriesSincePrune += 1
        guard peer.deliveriesSincePrune >= Self.prunePeriod, let store = peer.store else { return }
        peer.deliveriesSincePrune = 0
        do { try store.pruneDelivered(keeping: Self.keptReceivedItems) } catch {
            logger.warning("store: could not prune old received items: \(error)")
        }
    }

    /// `received.list`: immediate messages from memory and queued items from the database,
    /// merged by `seq`, oldest first. On phoned the items of every watch are merged (they
    /// share one `seq` counter), each naming its watch.
    func receivedList(after: UInt64, limit: Int) throws -> JSONObject {
        var items: [(UInt64, JSONObject)] = []
        for peer in peers {
            let messages = peer.session.receivedMessages(after: after)
            let stored = try peer.store?.deliveredItems(after: after, limit: limit + 1).filter { !$0.flags.contains(.system) } ?? []
            var rendered = messages.map { ($0.seq, ControlRendering.render($0)) } + stored.map { ($0.seq, ControlRendering.render($0)) }
            if role == .phone, let watch = peer.deviceId {
                for index in rendered.indices { rendered[index].1["watchDeviceId"] = .string(watch) }
            }
            items += rendered
        }
        items.sort { $0.0 < $1.0 }
        var result: JSONObject = ["items": .array(items.prefix(limit).map { .object($0.1) })]
        if items.count > limit { result["more"] = true }
        return result
    }
}

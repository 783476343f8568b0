import LinkRuntime
import LinkSession
import LinkStore

/// One counterpart device of a daemon: its session state machine, its durable store, its
/// link connection and its timers.
///
/// watchd has one, for the phone. phoned has one per paired watch, and one for what the app
/// queues before any watch has linked, which the first watch takes over.
package final class PeerSession {
    /// The watch's device id on phoned; nil on watchd, and on phoned before a watch linked.
    var deviceId: String?
    package let session: LinkSession
    package var store: (any DurableStore)?
    /// The file work of its transfers, in the directory beside its store.
    var files: FileTransferEngine?
    /// The link connection, once its handshake is done.
    var channel: LinkChannel?
    var timers: [SessionTimer: EventLoop.TimerID] = [:]
    /// The first write of this turn that failed; this peer's whole turn is rolled back.
    var turnFailure: Error?
    var deliveriesSincePrune = 0

    package init(deviceId: String?, session: LinkSession) {
        self.deviceId = deviceId
        self.session = session
    }

    var name: String { deviceId.map { "'\($0)'" } ?? "(no watch yet)" }
}

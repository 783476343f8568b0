import LinkJSON
import LinkRuntime
import LinkSession
import LinkTrace
import WireProtocol

/// What the daemon does when a peer's turn was rolled back because a write or sync of its
/// store failed (docs/durability.md): it says so (a log line, a trace fault, a `store.failed`
/// event), refuses the peer's items of that turn when the disk is full (7015), reloads the
/// committed state and restarts the peer's link, so that both sides resume from what is on
/// the disk. A daemon that cannot read its committed state back stops. The steps that decide
/// what the peers see (``recoverTurn(of:after:committer:reload:restartLink:)``) are shared
/// with the simulator (`LinkSimulation`), which runs them on its own store and link.
package final class StoreFailureRecovery {
    private let role: Role
    private let logger: Logger
    private let tracer: Tracer
    private let committer: TurnCommitter
    private let directory: PeerDirectory
    private let link: LinkEndpoint
    private let publish: (String, JSONObject) -> Void
    /// Stops the daemon, with what made it stop.
    private let stop: (DaemonStopped) -> Void

    init(
        role: Role, logger: Logger, tracer: Tracer, committer: TurnCommitter, directory: PeerDirectory, link: LinkEndpoint,
        publish: @escaping (String, JSONObject) -> Void, stop: @escaping (DaemonStopped) -> Void
    ) {
        self.role = role
        self.logger = logger
        self.tracer = tracer
        self.committer = committer
        self.directory = directory
        self.link = link
        self.publish = publish
        self.stop = stop
    }

    /// `peer`'s turn was rolled back by `error`.
    func turnRolledBack(_ peer: PeerSession, _ error: Error) {
        logger.error("store: a write failed and this turn was rolled back: \(error)")
        let failure = TurnCommitter.writeFailure(error)
        let reason = Self.reason(failure)
        var fields: JSONObject = ["name": reason, "message": .string("\(error)")]
        if let peer = peer.deviceId, role == .phone { fields["peer"] = .string(peer) }
        tracer.record(.fault, fields)
        fields["name"] = nil
        fields["reason"] = reason
        publish("store.failed", fields)
        do {
            try Self.recoverTurn(
                of: peer, after: error, committer: committer, reload: { try directory.reloadCommittedState(of: peer) },
                restartLink: { link.resynchronize(peer) })
        } catch {
            logger.error("store: cannot reload the committed state: \(error); stopping")
            return stop(DaemonStopped("the committed state could not be read back after a failed write (\(error))"))
        }
    }

    /// What a rolled-back turn of `peer` leads to: on a full disk the peer's items of that
    /// turn are refused (ITEM_ERROR 7015), then the committed state is reloaded (`reload`)
    /// and the link restarted (`restartLink`: GOAWAY and a hold, after what is queued), so
    /// that both sides resume from what is on the disk. Throws what `reload` throws; the link
    /// is then left as it is.
    package static func recoverTurn(
        of peer: PeerSession, after error: Error, committer: TurnCommitter, reload: () throws -> Void, restartLink: () -> Void
    ) throws {
        let failure = TurnCommitter.writeFailure(error)
        let reason = Self.reason(failure)
        if reason == "diskFull" {
            // What the peer sent in that turn cannot be kept: the peer learns it (7015).
            committer.perform(peer.session.refuseUncommittedItems(failure), from: peer)
        }
        try reload()
        restartLink()
    }

    /// A state file or a feature's database (`file`) could not be written: the change it held
    /// was not made, and what asked for it was answered with the error. Said as a failed turn
    /// is: a log line, a trace fault and a `state.writeFailed` event.
    func stateWriteFailed(_ file: String, _ error: Error) {
        logger.error("store: cannot write \(file): \(error); the change was not made")
        let reason = Self.reason(TurnCommitter.writeFailure(error))
        tracer.record(.fault, ["name": reason, "file": .string(file), "message": .string("\(error)")])
        publish("state.writeFailed", ["file": .string(file), "reason": reason, "message": .string("\(error)")])
    }

    /// How the events name a failed write: `diskFull` (ENOSPC, WatchConnectivity's 7015) or `writeFailed`.
    private static func reason(_ failure: SessionError) -> JSONValue {
        if case .wc(.insufficientSpace, _) = failure { return "diskFull" }
        return "writeFailed"
    }
}

/// What made a running daemon stop itself; `DaemonMain` prints it and exits 1.
struct DaemonStopped: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = "stopped: " + description }
}

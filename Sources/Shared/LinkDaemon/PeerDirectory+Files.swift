import LinkRuntime
import LinkSession
import LinkStore
import WireProtocol

/// The daemon's side of file transfers: it hands a session's ``FileAction``s to that peer's
/// ``FileTransferEngine`` and the engine's results back to the session.
///
/// Each peer keeps its files beside its store (phoned: one directory a watch), so what is
/// queued for one watch, or received from it, never mixes with another's, and the orphan
/// sweep at start only ever sees the files of one store.
extension PeerDirectory {
    /// Points `peer`'s session at `directory`, prepares the directory against the loaded state
    /// and connects the peer's engine.
    func startFileTransfers(_ state: inout DurableState, of peer: PeerSession, directory: String) throws {
        peer.session.fileDirectory = directory
        let files = FileTransferEngine(loop: loop, logger: logger, paths: peer.session.filePaths)
        try files.recover(&state, removingOrphans: true)
        files.copyFinished = { [unowned self, unowned peer] token, result in
            self.committer.tracer.withCause(self.copyCauses.removeValue(forKey: token)) {
                self.committer.perform(peer.session.fileCopied(token: token, result: result, now: self.loop.turnMilliseconds), from: peer)
            }
        }
        files.verified = { [unowned self, unowned peer] seq, matched, path in
            self.committer.perform(peer.session.fileVerified(seq: seq, matched: matched, path: path, now: self.loop.turnMilliseconds), from: peer)
        }
        files.verifyFailed = { [unowned self, unowned peer] seq, error in
            self.logger.error("file: checking received file \(seq) from \(peer.name) failed: \(error)")
            self.committer.failTurn(error, of: peer)
        }
        files.outboxUnreadable = { [unowned self, unowned peer] seq, error in
            self.committer.perform(peer.session.outboxFileFailed(seq: seq, error: error, now: self.loop.turnMilliseconds), from: peer)
        }
        peer.files = files
    }

    /// Performs a file action now (see ``FileAction/precedesCommit``); a failure fails the
    /// peer's turn. In a turn that failed already, writes are moot (the turn is rolled back),
    /// but a copy still starts: its request waits for it.
    func performFileActionBeforeCommit(_ action: FileAction, of peer: PeerSession) {
        guard let files = peer.files else { return }
        if peer.turnFailure != nil {
            guard case .copyIntoOutbox = action else { return }
        }
        if case .copyIntoOutbox(let token, _, _) = action, let cause = committer.tracer.pendingCause { copyCauses[token] = cause }
        do { try files.performBeforeCommit(action) } catch { committer.failTurn(error, of: peer) }
    }

    /// Performs a file action that waited for the turn's commit.
    func executeFileAction(_ action: FileAction, of peer: PeerSession) {
        switch action {
        case .sendChunk(let seq, let path, let offset, let length):
            guard let channel = peer.channel, let files = peer.files,
                let frame = files.chunk(seq: seq, path: path, offset: offset, length: length)
            else { return }
            channel.send(frame)
        case .removeFile(let path):
            peer.files?.remove(path)
        case .copyIntoOutbox, .write, .sync, .verify:
            performFileActionBeforeCommit(action, of: peer)
        }
    }
}

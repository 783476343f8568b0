import LinkRuntime
import LinkSession
import LinkStore
import WireProtocol

/// The daemon's side of file transfers: it hands the session's ``FileAction``s to the
/// ``FileTransferEngine`` and the engine's results back to the session.
extension Daemon {
    /// Prepares the file directories against the loaded state and connects the engine.
    func startFileTransfers(_ state: inout DurableState) throws {
        try files.recover(&state, removingOrphans: true)
        files.copyFinished = { [unowned self] token, result in
            self.perform(self.session.fileCopied(token: token, result: result, now: self.loop.turnMilliseconds))
        }
        files.verified = { [unowned self] seq, matched, path in
            self.perform(self.session.fileVerified(seq: seq, matched: matched, path: path, now: self.loop.turnMilliseconds))
        }
        files.verifyFailed = { [unowned self] seq, error in
            self.logger.error("file: checking received file \(seq) failed: \(error)")
            self.failTurn(error)
        }
        files.outboxUnreadable = { [unowned self] seq, error in
            self.perform(self.session.outboxFileFailed(seq: seq, error: error, now: self.loop.turnMilliseconds))
        }
    }

    /// Performs a file action now (see ``FileAction/precedesCommit``); a failure fails the turn.
    /// In a turn that failed already, writes are moot (the turn is rolled back), but a copy
    /// still starts: its request waits for it.
    func performFileActionBeforeCommit(_ action: FileAction, turnFailed: Bool = false) {
        if turnFailed {
            guard case .copyIntoOutbox = action else { return }
        }
        do { try files.performBeforeCommit(action) } catch { failTurn(error) }
    }

    /// Performs a file action that waited for the turn's commit.
    func executeFileAction(_ action: FileAction) {
        switch action {
        case .sendChunk(let seq, let path, let offset, let length):
            guard let channel = activeChannel, let frame = files.chunk(seq: seq, path: path, offset: offset, length: length) else { return }
            channel.send(frame)
        case .removeFile(let path):
            files.remove(path)
        case .copyIntoOutbox, .write, .sync, .verify:
            performFileActionBeforeCommit(action)
        }
    }
}

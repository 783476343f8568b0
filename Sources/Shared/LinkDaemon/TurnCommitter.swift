import LinkCollections
import LinkRuntime
import LinkSession
import LinkStore
import LinkSystem

/// Group commit: the durable writes of one loop turn are one transaction on each store they
/// touch, and nothing that depends on a write (an answer, an acknowledgement, an item on the
/// link) is released before that commit.
///
/// The committer decides *when* an action may happen; `execute` does it. A `.persist` joins
/// the turn's transaction on its peer's store; every action after it, of any peer, waits for
/// `endOfTurn`. A failed write or commit rolls the peer's turn back: answers that promised
/// durability fail (7015 when the disk is full) and what reported the write is dropped.
package final class TurnCommitter {
    /// Performs an action that may happen now.
    package var execute: (SessionAction, PeerSession) -> Void = { _, _ in }
    /// Performs a file action that must happen before the commit (see `FileAction.precedesCommit`).
    package var performBeforeCommit: (FileAction, PeerSession) -> Void = { _, _ in }
    /// A peer's turn was rolled back; its session must reload what is committed.
    package var storeFailed: (PeerSession, Error) -> Void = { _, _ in }
    /// Called after each batch of a peer's actions (phoned follows the active watch then).
    package var afterPerform: (PeerSession) -> Void = { _ in }

    private let peers: () -> [PeerSession]
    /// The trace: an action that waits keeps the cause it had.
    let tracer: Tracer
    /// Actions that wait for the commit of this turn's transactions, with their peer and the
    /// trace entry that caused them.
    private var deferred: [(PeerSession, SessionAction, Tracer.Cause?)] = []
    /// The list ``deferred`` had at the last commit, emptied there: the two change places at
    /// each commit, so that neither is copied or allocated again.
    private var draining: [(PeerSession, SessionAction, Tracer.Cause?)] = []
    /// Whether this turn wrote (or failed to write) a store: what follows waits for the commit.
    private(set) var turnWrites = false

    /// Whether nothing waits for a commit: no write this turn, nothing deferred.
    package var isIdle: Bool { !turnWrites && deferred.isEmpty }

    init(peers: @escaping () -> [PeerSession], tracer: Tracer) {
        self.peers = peers
        self.tracer = tracer
    }

    /// A committer that traces nothing.
    package convenience init(peers: @escaping () -> [PeerSession]) {
        self.init(peers: peers, tracer: Tracer(capacity: 0, filePath: nil))
    }

    /// What an action moved out of a list leaves in its place (never performed).
    private static let emptyAction = SessionAction.cancelTimer(.replyTimeouts)

    /// Performs the actions of `peer`'s session, holding back what must wait for the commit.
    package func perform(_ actions: consuming [SessionAction], from peer: PeerSession) {
        // Each action is moved out of the list, which keeps an action that holds nothing in its
        // place: an action holds payloads and frames, and neither a copy of it nor its second
        // release when the list is emptied for the session to reuse is paid for.
        actions.withUnsafeMutableBufferPointer { actions in
            guard let base = actions.baseAddress else { return }
            for index in actions.indices {
                let action = (base + index).move()
                (base + index).initialize(to: Self.emptyAction)
                if case .persist(let operation) = action {
                    // A durable write is something the op did: its trace entry is written.
                    if tracer.isOn { _ = tracer.cause }
                    turnWrites = true
                    guard peer.turnFailure == nil, let store = peer.store else { continue }
                    do { try store.apply(operation) } catch { peer.turnFailure = error }
                } else if case .file(let fileAction) = action, fileAction.precedesCommit {
                    performBeforeCommit(fileAction, peer)
                } else if turnWrites {
                    // Moved into the list of what waits, not copied.
                    deferred.append((peer, consume action, tracer.pendingCause))
                } else {
                    execute(action, peer)
                }
            }
        }
        peer.session.recycle(actions)
        afterPerform(peer)
    }

    /// Fails `peer`'s turn: its writes are rolled back at the turn's end.
    package func failTurn(_ error: Error, of peer: PeerSession) {
        turnWrites = true
        if peer.turnFailure == nil { peer.turnFailure = error }
    }

    /// The end of a loop turn: acknowledgements, one commit on each store written, then what
    /// waited for the commits.
    package func endOfTurn() {
        for peer in peers() {
            let acknowledgements = peer.session.flushAcknowledgements()
            // Most turns have none: the list only goes back.
            if acknowledgements.isEmpty {
                peer.session.recycle(acknowledgements)
            } else {
                perform(acknowledgements, from: peer)
            }
        }
        guard turnWrites else { return }
        var failures: [ObjectIdentifier: (SessionError, Error)] = [:]
        for peer in peers() {
            guard let store = peer.store, store.inTransaction || peer.turnFailure != nil else { continue }
            var failure = peer.turnFailure
            peer.turnFailure = nil
            if failure == nil {
                do { try store.commit() } catch { failure = error }
            }
            if let failure {
                store.rollback()
                failures[ObjectIdentifier(peer)] = (Self.writeFailure(failure), failure)
            }
        }
        // What waited is moved out of its list as `perform` moves actions (a copy of an action
        // retains its payloads and frames, and costs a few hundred instructions): its peer and
        // an action that holds nothing are left in its place until the list is emptied. What
        // these actions defer goes to the other list, for the next commit.
        swap(&deferred, &draining)
        turnWrites = false
        draining.withUnsafeMutableBufferPointer { waiting in
            guard let base = waiting.baseAddress else { return }
            for index in waiting.indices {
                let (peer, action, cause) = (base + index).move()
                (base + index).initialize(to: (peer, Self.emptyAction, nil))
                tracer.withCause(cause) {
                    if let (failure, _) = failures[ObjectIdentifier(peer)] {
                        executeAfterFailedWrite(action, failure, from: peer)
                    } else {
                        execute(action, peer)
                    }
                }
            }
        }
        draining.removeAllKeepingStorage()
        for peer in peers() {
            if let (_, error) = failures[ObjectIdentifier(peer)] { storeFailed(peer, error) }
        }
    }

    package static func writeFailure(_ error: Error) -> SessionError {
        let diskFull = (error as? SQLiteError)?.isDiskFull ?? (error as? SystemError)?.errno.isNoSpace ?? false
        return diskFull
            ? .wc(.insufficientSpace, "not enough space to store it (\(error)); nothing of this request was kept")
            : .wc(.genericError, "the database write failed (\(error)); nothing of this request was kept")
    }

    /// An action of a turn whose writes were rolled back: answers that promised durability
    /// fail, and what reported an uncommitted write is dropped.
    private func executeAfterFailedWrite(_ action: SessionAction, _ failure: SessionError, from peer: PeerSession) {
        switch action {
        case .respond(let token, .success(let result)) where result.isDurable:
            execute(.respond(token, .failure(failure)), peer)
        case .notify(let notification) where notification.isDurable:
            // Not told: it is handed again once the committed state is restored.
            if let seq = notification.handedSeq { peer.session.handedButNotTold(seq: seq) }
            return
        case .send(.item), .send(.ack), .send(.fileChunkAck), .send(.fileCancel), .file:
            return
        default:
            execute(action, peer)
        }
    }
}

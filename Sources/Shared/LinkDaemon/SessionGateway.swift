import LinkCollections
import LinkSession

/// Where commands for the app's session go in: control ops and features submit a command and
/// get the session's answer, matched by a request token.
final class SessionGateway {
    typealias Completion = (Result<CommandResult, SessionError>) -> Void

    private let directory: PeerDirectory
    private let committer: TurnCommitter
    private let loop: () -> Int64
    /// Each completion in a struct: a function stored in a generic container as it is is
    /// wrapped in a thunk, an allocation on every command.
    private var waiting = SequenceMap<Waiting>()
    private struct Waiting {
        let completion: Completion
    }
    private var nextToken: UInt64 = 1

    init(directory: PeerDirectory, committer: TurnCommitter, now: @escaping () -> Int64) {
        self.directory = directory
        self.committer = committer
        self.loop = now
    }

    /// Hands `command` to the app's session; `completion` gets its answer (now or later).
    func submit(_ command: SessionCommand, completion: @escaping Completion) {
        let token = RequestToken(nextToken)
        nextToken += 1
        waiting[token.rawValue] = Waiting(completion: completion)
        let app = directory.appPeer
        if case .reply(let replyId, _) = command, !app.session.awaitsReply(replyId),
            let sender = directory.peers.first(where: { $0.session.awaitsReply(replyId) })
        {
            // A message of the previous watch, answered after a switch.
            committer.perform(sender.session.handle(command, token: token, now: loop()), from: sender)
            return
        }
        committer.perform(app.session.handle(command, token: token, now: loop()), from: app)
        switch command {
        // A change of the app's state is shared where it is announced, whatever caused it
        // (ActionPerformer); these change what the state alone does not say.
        case .setDeviceFlags, .setReplies, .attachApp, .detachApp:
            directory.shareSettings(of: app)
        default:
            break
        }
    }

    /// The session answered the request with `token`.
    func complete(_ token: RequestToken, _ result: Result<CommandResult, SessionError>) {
        waiting.removeValue(forKey: token.rawValue)?.completion(result)
    }
}

import LinkCrypto
import WireProtocol

/// One side of the link handshake, as a state machine over frames.
///
/// Both sides send HELLO at once. On the peer's HELLO a side checks the role and the version
/// range, then proves the pairing key with AUTH. On the peer's AUTH it verifies the proof and
/// sends READY. The link is established for a side once it has verified the peer's AUTH and
/// received the peer's READY. Any failure ends the link with a GOAWAY naming the reason.
public struct LinkHandshake {
    public enum Step: Equatable {
        /// Send these frames and keep going.
        case send([Frame])
        /// The handshake is complete: the peer proved the key and accepted ours.
        case established(peer: Hello, version: UInt16)
        /// Refuse the peer: send GOAWAY with this code and reason, then close.
        case refuse(GoAwayCode, String)
        /// The peer refused us (or went away) with this code and reason.
        case peerRefused(code: UInt16, reason: String)
    }

    /// Decides whether a peer that proved the pairing key may link (e.g. not a second link from
    /// a watch that is linked already).
    public typealias Admission = (Hello) -> (GoAwayCode, String)?

    private enum State {
        case awaitingHello
        case awaitingAuth(peer: Hello, version: UInt16)
        case awaitingReady(peer: Hello, version: UInt16)
        case established
        case failed
    }

    public let role: Role
    public let hello: Hello
    private let key: [UInt8]
    private let admission: Admission
    private var state: State = .awaitingHello

    public init(
        role: Role, deviceId: String, key: [UInt8],
        nonce: [UInt8] = SecureRandom.bytes(LinkProtocol.nonceLength),
        minVersion: UInt16 = LinkProtocol.minVersion, maxVersion: UInt16 = LinkProtocol.maxVersion,
        admission: @escaping Admission = { _ in nil }
    ) {
        self.role = role
        self.key = key
        self.admission = admission
        hello = Hello(minVersion: minVersion, maxVersion: maxVersion, role: role, deviceId: deviceId, nonce: nonce)
    }

    /// The first frame to send.
    public func start() -> Frame { .hello(hello) }

    public var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    public mutating func receive(_ frame: Frame) -> Step {
        if case .goAway(let code, let reason) = frame {
            state = .failed
            return .peerRefused(code: code, reason: reason)
        }
        switch (state, frame) {
        case (.awaitingHello, .hello(let peer)):
            return receiveHello(peer)
        case (.awaitingAuth(let peer, let version), .auth(let proof)):
            guard
                PairingProof.verify(
                    proof, key: key, senderRole: peer.role, senderNonce: peer.nonce,
                    receiverNonce: hello.nonce)
            else {
                return fail(
                    .authenticationFailed,
                    "the \(peer.role.name) '\(peer.deviceId)' did not prove the pairing key (wrong pairing.key?)")
            }
            // Only a peer that proved the key learns why it is not admitted.
            if let (code, reason) = admission(peer) {
                return fail(code, reason)
            }
            state = .awaitingReady(peer: peer, version: version)
            return .send([.ready])
        case (.awaitingReady(let peer, let version), .ready):
            state = .established
            return .established(peer: peer, version: version)
        default:
            return fail(.protocolError, "unexpected \(frame.typeName) frame during the handshake")
        }
    }

    private mutating func receiveHello(_ peer: Hello) -> Step {
        guard peer.role != role else {
            return fail(.roleConflict, "the peer says it is a \(peer.role.name) too ('\(peer.deviceId)'); a link joins one phone and one watch")
        }
        let low = max(hello.minVersion, peer.minVersion)
        let high = min(hello.maxVersion, peer.maxVersion)
        guard low <= high else {
            return fail(
                .versionMismatch,
                "no common protocol version: this side speaks \(hello.minVersion)...\(hello.maxVersion), the peer \(peer.minVersion)...\(peer.maxVersion)")
        }
        state = .awaitingAuth(peer: peer, version: high)
        let proof = PairingProof.compute(key: key, senderRole: role, senderNonce: hello.nonce, receiverNonce: peer.nonce)
        return .send([.auth(proof: proof)])
    }

    private mutating func fail(_ code: GoAwayCode, _ reason: String) -> Step {
        state = .failed
        return .refuse(code, reason)
    }
}

extension Frame {
    /// The frame's name for logs and errors, e.g. "MESSAGE_ERROR".
    public var typeName: String { type.name }
}

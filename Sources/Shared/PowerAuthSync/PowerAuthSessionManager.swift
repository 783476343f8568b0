import LinkControl
import LinkDaemon
import LinkJSON
import LinkSession
import WireProtocol

/// What a handler makes of a request packet it accepted.
enum HandlerOutcome {
    /// The answer; with `sendLazily` it is also sent when the request had no reply handler.
    case answer(PowerAuthPacket, sendLazily: Bool)
    /// Refused: the answer is an error packet.
    case refused(String, code: Int64)
}

/// Who serves packets for some targets: a phone-side SDK instance or the watch's service.
protocol PacketHandler: AnyObject {
    /// nil when the handler does not serve the packet's target; the reason is for `pa.messageDropped`.
    func outcome(for packet: PowerAuthPacket, withoutReply: Bool) -> Result<HandlerOutcome, DropReason>
}

/// Why a packet was consumed without being served.
struct DropReason: Error {
    var reason: String
    var message: String
}

/// The SDK's `PowerAuthWCSessionManager` on one daemon: reads received packets, hands them to
/// the handler, answers, and sends packets lazily or with a response.
final class PowerAuthSessionManager {
    private let context: FeatureContext
    weak var handler: PacketHandler?
    private(set) var droppedCount = 0

    init(context: FeatureContext) {
        self.context = context
    }

    var role: Role { context.role }

    /// The SDK's `validSession`: activated, and on the phone paired with the watch app installed.
    var hasValidSession: Bool {
        let status = context.status()
        guard status.activationState == .activated else { return false }
        if role == .phone {
            return status.flags.contains(.isPaired) && status.flags.contains(.isWatchAppInstalled)
        }
        return true
    }

    // MARK: - Sending

    /// `sendPacket:`: an immediate message when reachable (a userInfo when that fails, except
    /// on 7002/7004/7005/7006), a userInfo otherwise. Returns whether it was issued.
    @discardableResult
    func sendLazily(_ packet: PowerAuthPacket) -> Bool {
        guard hasValidSession else {
            context.logger.info("powerauth: WCSession is not available; \(Self.describe(packet)) not issued")
            return false
        }
        let bytes = packet.encoded()
        if context.status().isReachable {
            context.submit(.sendMessage(.data(bytes), wantsReply: false, timeoutMilliseconds: nil)) { [weak self] result in
                guard let self, case .failure(let error) = result else { return }
                if case .wc(let code, _) = error,
                    [.sessionNotSupported, .sessionNotActivated, .deviceNotPaired, .watchAppNotInstalled].contains(code)
                {
                    self.context.logger.info("powerauth: \(Self.describe(packet)) failed to deliver: \(error)")
                    return
                }
                self.context.logger.info("powerauth: \(Self.describe(packet)) failed to deliver (\(error)); sending it as userInfo")
                self.transfer(bytes, packet)
            }
        } else {
            transfer(bytes, packet)
        }
        return true
    }

    private func transfer(_ bytes: [UInt8], _ packet: PowerAuthPacket) {
        let userInfo: [UInt8]
        do { userInfo = try PowerAuthPacket.userInfo(carrying: bytes) } catch {
            context.logger.error("powerauth: cannot encode the userInfo of \(Self.describe(packet)): \(error)")
            return
        }
        context.submit(.transferUserInfo(userInfo)) { [weak self] result in
            if case .failure(let error) = result {
                self?.context.logger.warning("powerauth: transferUserInfo of \(Self.describe(packet)) failed: \(error)")
            }
        }
    }

    /// `sendPacketWithResponse:`: needs a valid session and reachability; `completion` gets the
    /// response packet, or the WCError / PowerAuth error.
    func send(
        _ packet: PowerAuthPacket, expecting expected: PowerAuthResponse.Expected,
        completion: @escaping (Result<PowerAuthPacket, ControlError>) -> Void
    ) {
        guard hasValidSession else {
            completion(.failure(PowerAuthError.watchConnectivity("PA2WCSessionManager: WCSession is currently not available for messaging.").controlError))
            return
        }
        guard context.status().isReachable else {
            completion(.failure(PowerAuthError.watchConnectivity("PA2WCSessionManager: The counterpart device is not reachable.").controlError))
            return
        }
        context.submit(.sendMessage(.data(packet.encoded()), wantsReply: true, timeoutMilliseconds: nil)) { result in
            switch result {
            case .failure(.wc(let code, let message)):
                completion(.failure(ControlError(domain: WCErrorCode.domain, code: code.rawValue, name: code.name, message: message)))
            case .failure(.invalidArgument(let message)):
                completion(.failure(.control(.invalidArgument, message)))
            case .success(.reply(.data(let bytes))):
                completion(PowerAuthResponse.read(bytes, expecting: expected).mapError(\.controlError))
            case .success:
                completion(.failure(PowerAuthError.watchConnectivity("PA2WCSessionManager: Received response is in unknown data format.").controlError))
            }
        }
    }

    // MARK: - Receiving

    /// What the SDK's `processReceivedMessageData:replyHandler:` makes of received data.
    struct Processing {
        /// False for data that is not PowerAuth's: the app handles it.
        var processed: Bool
        /// The answer for a sender waiting for one (always set when it waits).
        var reply: PowerAuthPacket?
        /// An answer to send lazily (`get_session` without a reply handler).
        var lazyAnswer: PowerAuthPacket?
    }

    /// Reads a received packet, hands it to the handler and says what to answer, as
    /// `processReceivedMessageData:replyHandler:` does. A packet nobody serves is dropped, and
    /// the drop is made visible (``drop(target:_:)``).
    func process(_ bytes: [UInt8], wantsReply: Bool) -> Processing {
        var response: PowerAuthPacket?
        var errorMessage: String?
        switch PowerAuthPacket.decode(bytes) {
        case .notProcessed:
            return Processing(processed: false)
        case .broken(let why):
            drop(target: nil, DropReason(reason: "brokenPacket", message: why))
            errorMessage = "PA2WCSessionManager: Wrong packet received."
        case .packet(let packet):
            context.logger.debug("powerauth: received \(Self.describe(packet))\(wantsReply ? " wanting a reply" : "")")
            if packet.target == PowerAuthPacket.responseTarget {
                drop(target: packet.target, DropReason(reason: "responseTarget", message: "a request with the response target '*' is not allowed"))
                errorMessage = "PA2WCSessionManager: Requests with reponse target are not allowed."
            } else if let handler {
                switch handler.outcome(for: packet, withoutReply: !wantsReply) {
                case .failure(let reason):
                    drop(target: packet.target, reason)
                    errorMessage = "PA2WCSessionManager: Unable to handle request for target '\(packet.target)'."
                case .success(.refused(let message, let code)):
                    context.logger.info("powerauth: refused \(Self.describe(packet)): \(message)")
                    response = .failure(PowerAuthError(code: code, message: message))
                case .success(.answer(let answer, let lazily)):
                    guard wantsReply else { return Processing(processed: true, lazyAnswer: lazily ? answer : nil) }
                    response = answer
                }
            } else {
                drop(target: packet.target, DropReason(reason: "noHandler", message: "nothing serves PowerAuth packets here"))
                errorMessage = "PA2WCSessionManager: Unable to handle request for target '\(packet.target)'."
            }
        }
        guard wantsReply else { return Processing(processed: true) }
        return Processing(
            processed: true,
            reply: response ?? .failure(.watchConnectivity(errorMessage ?? "PA2WCSessionManager: Cannot create response packet.")))
    }

    /// A message the session routed here (the daemon plays the app): processed, answered
    /// through the session.
    func processMessage(_ bytes: [UInt8], replyId: UInt64?) {
        let outcome = process(bytes, wantsReply: replyId != nil)
        if !outcome.processed {
            drop(target: nil, DropReason(reason: "notAPacket", message: "the data is not a PowerAuth packet"))
        }
        if let lazy = outcome.lazyAnswer { sendLazily(lazy) }
        guard let replyId, let reply = outcome.reply else { return }
        context.submit(.reply(replyId: replyId, payload: .data(reply.encoded()))) { [weak self] result in
            if case .failure(let error) = result {
                self?.context.logger.warning("powerauth: cannot answer a packet: \(error)")
            }
        }
    }

    /// `processReceivedUserInfo:` for a userInfo the session routed here.
    func processUserInfo(_ encoded: [UInt8]) {
        guard let bytes = PowerAuthPacket.packetBytes(inUserInfo: encoded) else {
            drop(target: nil, DropReason(reason: "notAPacket", message: "the userInfo holds no packet Data"))
            return
        }
        processMessage(bytes, replyId: nil)
    }

    /// A packet consumed without being served, as the SDK drops it (it only logs): counted in
    /// `status`, published as `pa.messageDropped`, and a `fault` entry of the trace.
    private func drop(target: String?, _ reason: DropReason) {
        droppedCount += 1
        context.logger.warning("powerauth: dropped a packet for \(target ?? "(no target)"): \(reason.message)")
        var data: JSONObject = [
            "target": target.map { .string($0) } ?? .null, "reason": .string(reason.reason),
            "message": .string(reason.message),
        ]
        context.traceFault([
            "name": "pa.messageDropped", "target": data["target"] ?? .null, "reason": .string(reason.reason),
            "message": .string(reason.message),
        ])
        data["count"] = .int(Int64(droppedCount))
        context.publish("pa.messageDropped", data)
    }

    /// The target and command of a packet, for logs (never its token data).
    static func describe(_ packet: PowerAuthPacket) -> String {
        var text = "packet for \(packet.target)"
        if let command = packet.activationCommand ?? packet.tokenCommand { text += " (\(command))" }
        if let error = packet.error { text += " (error \(error.code))" }
        return text
    }
}

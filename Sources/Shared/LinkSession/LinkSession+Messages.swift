import LinkCollections
import WireProtocol

/// The session's immediate messages (`sendMessage`, `sendMessageData`): sending one and its
/// reply deadline, the reply or acknowledgement that settles it, receiving one and answering it
/// (automatically, delayed, by hand or by the attached app), the received messages waiting for
/// this side's reply, and the in-memory list `received.list` shows.
extension LinkSession {
    // MARK: - Sending

    /// The first reason this side cannot send an immediate message, in the order
    /// WatchConnectivity checks them.
    private func sendPrecondition(payloadLength: Int) -> SessionError? {
        if let error = activationFailure() ?? pairingFailure() { return error }
        if payloadLength > configuration.maximumMessagePayloadLength {
            return .wc(
                .payloadTooLarge,
                "the payload is \(payloadLength) bytes; messages are limited to \(configuration.maximumMessagePayloadLength) bytes")
        }
        if role == .watch, !appIsInteractive {
            // "Messages can only be sent while the sending app is running", and only the
            // active, running watch app wakes the phone app (WCSession.h, sendMessage).
            return .wc(
                .notReachable,
                "\(watchAppIdleReason): only the watch app running in the foreground (or in a workout) sends messages")
        }
        if !isReachable {
            return .wc(.notReachable, "the \(peerName) is not reachable (\(unreachableReason))")
        }
        return nil
    }

    func sendMessage(
        _ payload: MessagePayload, wantsReply: Bool, timeout: Int64?,
        token: RequestToken, now: Int64
    ) {
        if let error = sendPrecondition(payloadLength: payload.byteCount) {
            actions.append(.respond(token, .failure(error)))
            return
        }
        let id = nextMessageId
        nextMessageId &+= 1
        pendingSends[id] = PendingSend(token: token, wantsReply: wantsReply, isData: payload.isData)
        actions.append(.send(.message(id: id, wantsReply: wantsReply, payload: payload)))
        let deadline = now + (timeout ?? configuration.defaultReplyTimeoutMilliseconds)
        deadlines.push(deadline: deadline, id: id)
        if deadlines.count > 2 * pendingSends.count + 1_024 {
            deadlines.compact { pendingSends[$0] != nil }
        }
        if armedDeadline.map({ deadline < $0 }) ?? true {
            armedDeadline = deadline
            actions.append(.armTimer(.replyTimeouts, deadlineMilliseconds: deadline))
        }
    }

    /// Arms the one timer for the earliest deadline of a message still pending.
    func armNextDeadline() {
        while let top = deadlines.top, pendingSends[top.id] == nil { _ = deadlines.pop() }
        guard let top = deadlines.top else { return }
        armedDeadline = top.deadline
        actions.append(.armTimer(.replyTimeouts, deadlineMilliseconds: top.deadline))
    }

    func receiveReply(id: UInt64, payload: MessagePayload) {
        guard let pending = pendingSends[id], pending.wantsReply else { return }
        pendingSends[id] = nil
        switch decode(payload) {
        case .success(let content):
            if content.isData != pending.isData {
                actions.append(
                    .respond(
                        pending.token,
                        .failure(
                            .wc(
                                .messageReplyFailed,
                                "the \(peerName) replied with \(content.isData ? "Data" : "a dictionary") to a \(pending.isData ? "sendMessageData" : "sendMessage")"
                            ))))
            } else {
                actions.append(.respond(pending.token, .success(.reply(content))))
            }
        case .failure(let error):
            actions.append(
                .respond(
                    pending.token,
                    .failure(
                        .wc(
                            .messageReplyFailed,
                            "the reply from the \(peerName) is not a valid property list: \(error)"))))
        }
    }

    // MARK: - Receiving

    func receiveMessage(id: UInt64, wantsReply: Bool, payload: MessagePayload, now: Int64) {
        if holdsMessagesForLaunch() {
            return holdForLaunch(id: id, wantsReply: wantsReply, payload: payload, now: now)
        }
        // An inactive session still receives (quick watch switching); it only stops sending.
        guard activationState != .notActivated else {
            actions.append(
                .send(
                    .messageError(
                        id: id, code: UInt16(WCErrorCode.deliveryFailed.rawValue),
                        description: "the receiving session is not activated")))
            return
        }
        let content: MessageContent
        switch decode(payload) {
        case .success(let decoded): content = decoded
        case .failure(let error):
            actions.append(
                .send(
                    .messageError(
                        id: id, code: UInt16(WCErrorCode.payloadUnsupportedTypes.rawValue),
                        description: "the message is not a valid property-list dictionary: \(error)")))
            return
        }
        if role == .watch, !appIsInteractive {
            // Sent while the watch app was still reachable, arriving once it is not: "the
            // counterpart is unreachable (or becomes unreachable before the message is
            // delivered)" (sendMessage).
            actions.append(
                .send(
                    .messageError(
                        id: id, code: UInt16(WCErrorCode.notReachable.rawValue),
                        description: "\(watchAppIdleReason), as the message arrived")))
            return
        }
        if role == .phone, appState == .notRunning, attachedApp == nil {
            // The watch app's message launches the phone app in the background (sendMessage).
            // An attached app process that quit is relaunched by its test, not by the daemon.
            changeAppState(to: .background)
        }
        let seq = allocateReceivedSeq()
        if frameworksRunInTheDaemon, let isSystem = configuration.isSystemMessage, isSystem(payload) {
            if wantsReply {
                rememberAwaitingReply(
                    seq,
                    AwaitingReply(
                        messageId: id, isData: payload.isData,
                        linkGeneration: linkGeneration, scheduled: nil))
            } else {
                actions.append(.send(.messageAck(id: id)))
            }
            actions.append(.notify(.systemMessageReceived(replyId: wantsReply ? seq : nil, content: content)))
            return
        }
        var item = ReceivedItem(seq: seq, kind: payload.isData ? .messageData : .message, content: content, replyId: nil)
        if let app = attachedApp {
            let method: AppHandles =
                wantsReply
                ? (payload.isData ? .messageDataWithReply : .messageWithReply)
                : (payload.isData ? .messageData : .message)
            guard app.contains(method) else {
                actions.append(
                    .send(
                        .messageError(
                            id: id, code: UInt16(WCErrorCode.deliveryFailed.rawValue),
                            description:
                                "the \(role == .phone ? "phone" : "watch") app has no delegate method for \(wantsReply ? "a message with a reply handler" : "a message without a reply handler")"
                        )))
                return
            }
            if wantsReply {
                // The attached app answers through its reply handler (`message.reply`).
                item.replyId = seq
                rememberAwaitingReply(
                    seq,
                    AwaitingReply(
                        messageId: id, isData: payload.isData,
                        linkGeneration: linkGeneration, scheduled: nil, isTheApps: true))
                record(item)
                return
            }
        }
        guard wantsReply else {
            record(item)
            actions.append(.send(.messageAck(id: id)))
            return
        }
        switch replies.mode {
        case .noReplyHandler:
            actions.append(
                .send(
                    .messageError(
                        id: id, code: UInt16(WCErrorCode.deliveryFailed.rawValue),
                        description:
                            "the \(role == .phone ? "phone" : "watch") app has no session(_:didReceiveMessage:replyHandler:) (replies.set noReplyHandler)")))
            return
        case .manual:
            item.replyId = seq
            rememberAwaitingReply(
                seq,
                AwaitingReply(
                    messageId: id, isData: payload.isData,
                    linkGeneration: linkGeneration, scheduled: nil))
            record(item)
        case .none:
            record(item)
        case .empty, .echo, .fixed:
            record(item)
            let reply = automaticReply(to: payload)
            if replies.delayMilliseconds > 0 {
                rememberAwaitingReply(
                    seq,
                    AwaitingReply(
                        messageId: id, isData: payload.isData,
                        linkGeneration: linkGeneration, scheduled: reply))
                actions.append(.armTimer(.delayedReply(replyId: seq), deadlineMilliseconds: now + replies.delayMilliseconds))
            } else {
                actions.append(.send(.reply(id: id, payload: reply)))
            }
        }
    }

    private func automaticReply(to payload: MessagePayload) -> MessagePayload {
        switch (replies.mode, payload) {
        case (.echo, _):
            return payload
        case (.fixed, .dictionary):
            return .dictionary(replies.reply ?? PropertyListCodec.emptyDictionary)
        case (.fixed, .data):
            return .data(replies.replyData ?? [])
        case (_, .dictionary):
            return .dictionary(PropertyListCodec.emptyDictionary)
        case (_, .data):
            return .data([])
        }
    }

    func replyManually(replyId: UInt64, payload: MessagePayload, token: RequestToken) {
        guard let awaiting = awaitingReply(replyId, op: "message.reply", token: token) else { return }
        guard awaiting.isData == payload.isData else {
            actions.append(
                .respond(
                    token,
                    .failure(
                        .invalidArgument(
                            awaiting.isData
                                ? "message.reply: message \(replyId) came from sendMessageData: answer with replyData"
                                : "message.reply: message \(replyId) came from sendMessage: answer with reply"))))
            return
        }
        forgetAwaitingReply(replyId)
        guard isLinkUp, awaiting.linkGeneration == linkGeneration else {
            actions.append(.respond(token, .failure(.wc(.notReachable, "the link to the \(peerName) dropped since the message arrived"))))
            return
        }
        if payload.byteCount > configuration.maximumMessagePayloadLength {
            let reason = "the reply is \(payload.byteCount) bytes; replies are limited to \(configuration.maximumMessagePayloadLength) bytes"
            actions.append(
                .send(
                    .messageError(
                        id: awaiting.messageId, code: UInt16(WCErrorCode.messageReplyFailed.rawValue),
                        description: "the \(role == .phone ? "phone" : "watch") could not reply: \(reason)")))
            actions.append(.respond(token, .failure(.wc(.payloadTooLarge, reason))))
            return
        }
        actions.append(.send(.reply(id: awaiting.messageId, payload: payload)))
        actions.append(.respond(token, .success(.empty)))
    }

    /// The message waiting for this side's answer under `replyId`, or nil after answering
    /// `token` with what was wrong.
    private func awaitingReply(_ replyId: UInt64, op: String, token: RequestToken) -> AwaitingReply? {
        guard let awaiting = awaitingReplies[replyId], awaiting.scheduled == nil else {
            actions.append(
                .respond(
                    token,
                    .failure(
                        .invalidArgument(
                            "\(op): no message is waiting for a reply with replyId \(replyId) (already answered, never asked for one, or the link dropped since)"
                        ))))
            return nil
        }
        return awaiting
    }

    /// `message.decline`: the app has no delegate method with a reply handler (7014).
    func declineMessage(replyId: UInt64, token: RequestToken) {
        guard let awaiting = awaitingReply(replyId, op: "message.decline", token: token) else { return }
        forgetAwaitingReply(replyId)
        if isLinkUp, awaiting.linkGeneration == linkGeneration {
            actions.append(
                .send(
                    .messageError(
                        id: awaiting.messageId, code: UInt16(WCErrorCode.deliveryFailed.rawValue),
                        description:
                            "the \(role == .phone ? "phone" : "watch") app has no session(_:didReceiveMessage\(awaiting.isData ? "Data" : ""):replyHandler:)")))
        }
        actions.append(.respond(token, .success(.empty)))
    }

    private func rememberAwaitingReply(_ replyId: UInt64, _ awaiting: AwaitingReply) {
        awaitingReplies[replyId] = awaiting
        awaitingReplyOrder.append(replyId)
        if awaitingReplyOrder.count > configuration.manualReplyCapacity * 2 {
            awaitingReplyOrder.removeAll { awaitingReplies[$0] == nil }
        }
        while awaitingReplies.count > configuration.manualReplyCapacity, !awaitingReplyOrder.isEmpty {
            let oldest = awaitingReplyOrder.removeFirst()
            if let evicted = awaitingReplies.removeValue(forKey: oldest), evicted.scheduled != nil {
                actions.append(.cancelTimer(.delayedReply(replyId: oldest)))
            }
        }
    }

    /// Every message this side sent and still waits on fails with `error`.
    func failPendingSends(_ error: (PendingSend) -> SessionError) {
        for (_, pending) in pendingSends.sorted(by: { $0.key < $1.key }) {
            actions.append(.respond(pending.token, .failure(error(pending))))
        }
        pendingSends.removeAll()
    }

    /// Forgets every received message still waiting for this side's reply; with `error`, its
    /// sender learns that no reply will come.
    func forgetAwaitingReplies(answering error: (code: WCErrorCode, description: String)?) {
        for replyId in awaitingReplyOrder {
            guard let awaiting = awaitingReplies[replyId] else { continue }
            if awaiting.scheduled != nil { actions.append(.cancelTimer(.delayedReply(replyId: replyId))) }
            if let error, isLinkUp, awaiting.linkGeneration == linkGeneration {
                actions.append(
                    .send(
                        .messageError(
                            id: awaiting.messageId, code: UInt16(error.code.rawValue),
                            description: error.description)))
            }
        }
        awaitingReplies.removeAll()
        awaitingReplyOrder.removeAll()
    }

    /// The attached app quit: the messages it had not answered fail on their senders at once
    /// (7007), as when the counterpart "becomes unreachable before the message is delivered".
    func failTheAppsUnansweredMessages() {
        for replyId in awaitingReplyOrder {
            guard let awaiting = awaitingReplies[replyId], awaiting.isTheApps else { continue }
            forgetAwaitingReply(replyId)
            if isLinkUp, awaiting.linkGeneration == linkGeneration {
                actions.append(
                    .send(
                        .messageError(
                            id: awaiting.messageId, code: UInt16(WCErrorCode.notReachable.rawValue),
                            description: "the \(role == .phone ? "phone" : "watch") app quit before it replied")))
            }
        }
    }

    /// `sessionDidBecomeInactive`: "all interactive messages will be cancelled" (WCSession.h).
    func cancelInteractiveMessages() {
        failPendingSends { _ in
            .wc(
                .sessionInactive,
                "the session became inactive (the phone switched to another watch) before the \(peerName) answered; interactive messages are cancelled")
        }
        forgetAwaitingReplies(answering: (.notReachable, "the phone switched to another watch before its app replied"))
    }

    func forgetAwaitingReply(_ replyId: UInt64) {
        awaitingReplies[replyId] = nil
        if awaitingReplies.isEmpty { awaitingReplyOrder.removeAll(keepingCapacity: true) }
    }

    /// Messages received since `after`, oldest first (immediate messages are kept in memory).
    public func receivedMessages(after: UInt64) -> [ReceivedItem] {
        received.elements.filter { $0.seq > after }
    }

    /// The next `seq` of `received.list`. Numbers are reserved in the store in blocks so that
    /// a restart never hands out one that an immediate message already had.
    func allocateReceivedSeq() -> UInt64 {
        let seq = nextReceivedSeq
        nextReceivedSeq &+= 1
        if seq > reservedSeq {
            reservedSeq = seq + 1_023
            actions.append(.persist(.reserveSeq(upTo: reservedSeq)))
        }
        return seq
    }

    private func record(_ item: ReceivedItem) {
        received.append(item, weight: item.payloadByteCount)
        actions.append(.notify(.messageReceived(item)))
    }
}

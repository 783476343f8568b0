import LinkControl
import LinkSession
import WireProtocol

/// Immediate messages: sending, answering, the reply behaviour, what was received.
struct MessageOperations {
    let context: FeatureContext
    let directory: PeerDirectory

    static let timeout: ControlOperation.Argument = .optional("timeoutMs", .integer(1...3_600_000), "the reply timeout")

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "message.send", summary: "sendMessage: a dictionary, with or without a reply handler",
                arguments: [.required("message", .object), .optional("wantsReply", .bool), Self.timeout]
            ) { call in
                let message = try call.args.dictionaryPayload("message")
                context.submit(
                    .sendMessage(
                        .dictionary(message), wantsReply: try call.args.optionalBool("wantsReply") ?? false,
                        timeoutMilliseconds: try call.args.optionalInt("timeoutMs")), answering: call)
            },
            ControlOperation(
                "message.sendData", summary: "sendMessageData: raw data, with or without a reply handler",
                arguments: [.required("data", .data), .optional("wantsReply", .bool), Self.timeout]
            ) { call in
                let data = try call.args.dataPayload("data")
                context.submit(
                    .sendMessage(
                        .data(data), wantsReply: try call.args.optionalBool("wantsReply") ?? false,
                        timeoutMilliseconds: try call.args.optionalInt("timeoutMs")), answering: call)
            },
            ControlOperation(
                "message.reply", summary: "answer a received message in manual reply mode",
                arguments: [
                    .required("replyId", .integer(1...Int64.max)), .optional("reply", .object),
                    .optional("replyData", .data),
                ]
            ) { call in
                let hasReply = call.args.contains("reply")
                guard hasReply != call.args.contains("replyData") else {
                    throw call.args.invalid("give exactly one of 'reply' (object) or 'replyData' ({\"$data\": base64})")
                }
                let payload: MessagePayload =
                    hasReply
                    ? .dictionary(try call.args.dictionaryPayload("reply"))
                    : .data(try call.args.dataPayload("replyData"))
                context.submit(.reply(replyId: UInt64(try call.args.int("replyId")), payload: payload), answering: call)
            },
            ControlOperation(
                "replies.set", summary: "how the app answers messages that want a reply",
                arguments: [
                    .required("mode", .string, ReplyMode.allCases.map(\.rawValue).joined(separator: ", ")),
                    .optional("reply", .object), .optional("replyData", .data),
                    .optional("delayMs", .integer(0...3_600_000)),
                ]
            ) { call in
                let modeName = try call.args.string("mode")
                guard let mode = ReplyMode(rawValue: modeName) else {
                    throw call.args.invalid("'mode' must be one of \(ReplyMode.allCases.map(\.rawValue).joined(separator: ", ")); got '\(modeName)'")
                }
                let reply = call.args.contains("reply") ? try call.args.dictionaryPayload("reply") : nil
                let replyData = call.args.contains("replyData") ? try call.args.dataPayload("replyData") : nil
                if mode != .fixed, reply != nil || replyData != nil {
                    throw call.args.invalid("'reply' and 'replyData' go with mode 'fixed'")
                }
                let delay = try call.args.optionalInt("delayMs") ?? 0
                context.submit(
                    .setReplies(ReplyConfiguration(mode: mode, reply: reply, replyData: replyData, delayMilliseconds: delay)),
                    answering: call)
            },
            ControlOperation(
                "received.list", summary: "what the app received: messages, userInfo, contexts, files, oldest first",
                arguments: [.optional("after", .integer(0...Int64.max)), .optional("limit", .integer(1...10_000))]
            ) { call in
                let after = UInt64(try call.args.optionalInt("after") ?? 0)
                let limit = Int(try call.args.optionalInt("limit") ?? 1_000)
                call.succeed(try directory.receivedList(after: after, limit: limit))
            },
        ]
    }
}

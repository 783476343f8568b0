import Foundation
import LinkJSON

extension WatchLinkClient {
    /// `message.send` (`sendMessage(_:replyHandler:errorHandler:)`).
    ///
    /// - Parameters:
    ///   - message: the dictionary to send, property-list values as JSON (docs/control-protocol.md).
    ///   - wantsReply: whether the sender has a reply handler.
    ///   - timeoutMs: how long to wait for the reply (the daemon's default is 10,000 ms).
    /// - Returns: the reply when `wantsReply`; `nil` once the other side has a message that
    ///   wants none.
    @discardableResult
    public func sendMessage(
        _ message: JSONObject, wantsReply: Bool = false,
        timeoutMs: Int? = nil
    ) async throws(WatchLinkError) -> JSONObject? {
        var args: JSONObject = ["message": .object(message)]
        if wantsReply { args["wantsReply"] = true }
        if let timeoutMs { args["timeoutMs"] = .int(Int64(timeoutMs)) }
        let result = try await call("message.send", args)
        return wantsReply ? try ResultReader(result, op: "message.send").object("reply") : nil
    }

    /// `message.sendData` (`sendMessageData(_:replyHandler:errorHandler:)`).
    ///
    /// - Returns: the reply's bytes when `wantsReply`, else `nil`.
    @discardableResult
    public func sendMessageData(
        _ data: [UInt8], wantsReply: Bool = false,
        timeoutMs: Int? = nil
    ) async throws(WatchLinkError) -> [UInt8]? {
        var args: JSONObject = ["data": WatchLinkData.json(data)]
        if wantsReply { args["wantsReply"] = true }
        if let timeoutMs { args["timeoutMs"] = .int(Int64(timeoutMs)) }
        let result = try await call("message.sendData", args)
        guard wantsReply else { return nil }
        guard let value = result["replyData"], let bytes = WatchLinkData.bytes(value) else {
            throw .invalidResponse("the result of 'message.sendData' has no valid 'replyData': \(result)")
        }
        return bytes
    }

    /// `message.sendData` with Foundation's `Data`.
    @discardableResult
    public func sendMessageData(
        _ data: Data, wantsReply: Bool = false,
        timeoutMs: Int? = nil
    ) async throws(WatchLinkError) -> Data? {
        try await sendMessageData([UInt8](data), wantsReply: wantsReply, timeoutMs: timeoutMs).map { Data($0) }
    }

    /// `message.reply`: answers the dictionary message `replyId` (from `message.received`).
    public func reply(replyId: Int64, reply: JSONObject) async throws(WatchLinkError) {
        _ = try await call("message.reply", ["replyId": .int(replyId), "reply": .object(reply)])
    }

    /// `message.reply`: answers the data message `replyId` with `replyData`.
    public func reply(replyId: Int64, replyData: [UInt8]) async throws(WatchLinkError) {
        _ = try await call("message.reply", ["replyId": .int(replyId), "replyData": WatchLinkData.json(replyData)])
    }

    /// `message.reply` with Foundation's `Data`.
    public func reply(replyId: Int64, replyData: Data) async throws(WatchLinkError) {
        try await reply(replyId: replyId, replyData: [UInt8](replyData))
    }

    /// `message.decline`: the app has no reply handler for message `replyId`; its sender
    /// gets 7014 `deliveryFailed`.
    public func declineMessage(replyId: Int64) async throws(WatchLinkError) {
        _ = try await call("message.decline", ["replyId": .int(replyId)])
    }

    /// `replies.set`: how this side answers messages that want a reply.
    ///
    /// - Parameters:
    ///   - mode: how messages that want a reply are answered.
    ///   - reply: the dictionary `fixed` answers with.
    ///   - replyData: the bytes `fixed` answers data messages with.
    ///   - delayMs: how long automatic replies wait.
    /// - Returns: the configuration now.
    @discardableResult
    public func setReplies(
        mode: WatchLinkReplyMode, reply: JSONObject? = nil, replyData: [UInt8]? = nil,
        delayMs: Int? = nil
    ) async throws(WatchLinkError) -> JSONObject {
        var args: JSONObject = ["mode": .string(mode.rawValue)]
        if let reply { args["reply"] = .object(reply) }
        if let replyData { args["replyData"] = WatchLinkData.json(replyData) }
        if let delayMs { args["delayMs"] = .int(Int64(delayMs)) }
        return try await call("replies.set", args)
    }
}

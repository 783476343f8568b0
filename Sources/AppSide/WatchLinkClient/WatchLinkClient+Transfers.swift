import LinkJSON

/// One entry of `userInfo.outstanding`.
public struct WatchLinkOutstandingUserInfo: Sendable, Hashable {
    /// The transfer's id.
    public var transferId: String
    /// The dictionary being transferred.
    public var userInfo: JSONObject
    /// Whether the item is on the link, waiting for the other side's acknowledgement.
    public var isTransferring: Bool
    /// Whether the item carries the current complication data.
    public var isCurrentComplicationInfo: Bool
}

/// One entry of `file.outstanding`.
public struct WatchLinkOutstandingFile: Sendable, Hashable {
    /// The transfer's id.
    public var transferId: String
    /// The outbox copy being sent.
    public var path: String
    /// `{}` when the transfer has none.
    public var metadata: JSONObject
    /// The file's size.
    public var totalBytes: Int64
    /// What the other side has made durable, as it last said.
    public var completedBytes: Int64
    /// Whether this is the one file on the link now.
    public var isTransferring: Bool
}

extension WatchLinkClient {
    /// `userInfo.transfer` (`transferUserInfo(_:)`): queues `userInfo` for guaranteed,
    /// in-order delivery; answered once the daemon has committed it.
    ///
    /// - Returns: the transfer's id, as `userInfo.didFinish` and `userInfo.outstanding` name it.
    public func transferUserInfo(_ userInfo: JSONObject) async throws(WatchLinkError) -> String {
        try ResultReader(try await call("userInfo.transfer", ["userInfo": .object(userInfo)]), op: "userInfo.transfer")
            .string("transferId")
    }

    /// `complication.transfer` (phone, `transferCurrentComplicationUserInfo(_:)`).
    ///
    /// - Returns: the transfer's id and what is left of the day's complication budget.
    public func transferComplicationUserInfo(_ userInfo: JSONObject) async throws(WatchLinkError) -> (transferId: String, remaining: Int) {
        let reader = ResultReader(try await call("complication.transfer", ["userInfo": .object(userInfo)]), op: "complication.transfer")
        return (try reader.string("transferId"), try reader.int("remaining"))
    }

    /// `userInfo.cancel`: true when the transfer was still queued and will never be delivered.
    public func cancelUserInfo(transferId: String) async throws(WatchLinkError) -> Bool {
        try ResultReader(try await call("userInfo.cancel", ["transferId": .string(transferId)]), op: "userInfo.cancel")
            .bool("cancelled")
    }

    /// `userInfo.outstanding`: the transfers not yet acknowledged by the other side, oldest first.
    public func outstandingUserInfo() async throws(WatchLinkError) -> [WatchLinkOutstandingUserInfo] {
        try ResultReader(try await call("userInfo.outstanding"), op: "userInfo.outstanding").objects("transfers") { entry throws(WatchLinkError) in
            WatchLinkOutstandingUserInfo(
                transferId: try entry.string("transferId"), userInfo: try entry.object("userInfo"),
                isTransferring: entry.optionalBool("isTransferring") ?? false,
                isCurrentComplicationInfo: entry.optionalBool("isCurrentComplicationInfo") ?? false)
        }
    }

    /// `context.update` (`updateApplicationContext(_:)`): the newest context wins.
    public func updateApplicationContext(_ context: JSONObject) async throws(WatchLinkError) {
        _ = try await call("context.update", ["context": .object(context)])
    }

    /// `context.get`: the context this side sent last and the one it received last (each `{}`
    /// until set).
    public func applicationContext() async throws(WatchLinkError) -> (applicationContext: JSONObject, receivedApplicationContext: JSONObject) {
        let reader = ResultReader(try await call("context.get"), op: "context.get")
        return (try reader.object("applicationContext"), try reader.object("receivedApplicationContext"))
    }

    /// `file.transfer` (`transferFile(_:metadata:)`): the daemon copies the file at the
    /// absolute `path` into its outbox and answers once the copy is durable.
    ///
    /// - Returns: the transfer's id, as `file.progress`, `file.didFinish` and
    ///   `file.outstanding` name it.
    public func transferFile(path: String, metadata: JSONObject? = nil) async throws(WatchLinkError) -> String {
        var args: JSONObject = ["path": .string(path)]
        if let metadata { args["metadata"] = .object(metadata) }
        return try ResultReader(try await call("file.transfer", args), op: "file.transfer").string("transferId")
    }

    /// `file.outstanding`: the file transfers not yet delivered, oldest first.
    public func outstandingFiles() async throws(WatchLinkError) -> [WatchLinkOutstandingFile] {
        try ResultReader(try await call("file.outstanding"), op: "file.outstanding").objects("transfers") { entry throws(WatchLinkError) in
            WatchLinkOutstandingFile(
                transferId: try entry.string("transferId"), path: try entry.string("path"),
                metadata: entry.object["metadata"]?.objectValue ?? [:],
                totalBytes: Int64(try entry.int("totalBytes")),
                completedBytes: Int64(entry.optionalInt("completedBytes") ?? 0),
                isTransferring: entry.optionalBool("isTransferring") ?? false)
        }
    }

    /// `file.cancel` (`WCSessionFileTransfer.cancel()`): true when the transfer stopped and
    /// will never be delivered.
    public func cancelFile(transferId: String) async throws(WatchLinkError) -> Bool {
        try ResultReader(try await call("file.cancel", ["transferId": .string(transferId)]), op: "file.cancel")
            .bool("cancelled")
    }
}

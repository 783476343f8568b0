import Foundation
import LinkJSON
import WatchLinkClient

/// userInfo and file transfers: the object is returned at once and learns its id when the
/// daemon answers (requests go out in call order); failures of the request, like failures
/// of the transfer later, reach `session(_:didFinish:error:)`.
extension WCSession {
    func startUserInfoTransfer(_ userInfo: [String: Any], complication: Bool) -> WCSessionUserInfoTransfer {
        let transfer = WCSessionUserInfoTransfer(userInfo: userInfo, isCurrentComplicationInfo: complication, session: self)
        let json: JSONObject
        do {
            json = try PropertyListConversion.json(from: userInfo)
        } catch {
            finish(transfer, error: error)
            return transfer
        }
        request(
            transfer, complication ? "complication.transfer" : "userInfo.transfer", ["userInfo": .object(json)],
            fail: { [self] in finish(transfer, error: $0) },
            named: { [self] id, answer in
                if let remaining = answer["remaining"]?.intValue {
                    state.withLock { $0.remainingComplicationUserInfoTransfers = Int(remaining) }
                }
                transfers.register(transfer, id: id)
                if transfer.assign(transferId: id) { cancel(transfer) }
            })
        return transfer
    }

    func startFileTransfer(_ url: URL, metadata: [String: Any]?) -> WCSessionFileTransfer {
        let path = Self.absolutePath(of: url)
        let size = (try? URL(fileURLWithPath: path).resourceValues(forKeys: [.fileSizeKey]).fileSize).flatMap { $0 }
        let transfer = WCSessionFileTransfer(
            file: WCSessionFile(fileURL: url, metadata: metadata),
            totalBytes: Int64(size ?? 0), session: self)
        guard url.isFileURL else {
            finish(transfer, error: WCError(.invalidParameter, "transferFile needs a file URL, not \(url.absoluteString)"))
            return transfer
        }
        var args: JSONObject = ["path": .string(path)]
        do {
            if let metadata { args["metadata"] = .object(try PropertyListConversion.json(from: metadata)) }
        } catch {
            finish(transfer, error: error)
            return transfer
        }
        request(
            transfer, "file.transfer", args,
            fail: { [self] in finish(transfer, error: $0) },
            named: { [self] id, _ in
                transfers.register(transfer, id: id)
                if transfer.assign(transferId: id) { cancel(transfer) }
            })
        return transfer
    }

    /// Sends the request that starts `transfer`: `named` gets the daemon's id (and its whole
    /// answer), `fail` what went wrong (no connection, the daemon's refusal, no id).
    private func request(
        _ transfer: some SessionTransfer, _ op: String, _ args: JSONObject,
        fail: @escaping @Sendable (WCError) -> Void,
        named: @escaping @Sendable (String, JSONObject) -> Void
    ) {
        let client: WatchLinkClient
        switch sendingClient() {
        case .success(let connected): client = connected
        case .failure(let error): return fail(error)
        }
        transfers.addWaiting(transfer)
        client.send(op, args) { [transfers] result in
            switch result {
            case .success(let answer):
                guard let id = answer["transferId"]?.stringValue else {
                    transfers.removeWaiting(transfer)
                    return fail(WCError(.genericError, "the daemon named no transferId: \(answer)"))
                }
                named(id, answer)
            case .failure(let error):
                transfers.removeWaiting(transfer)
                fail(WCError(error))
            }
        }
    }

    private static func absolutePath(of url: URL) -> String {
        let path = url.standardizedFileURL.path
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
            .appendingPathComponent(path).standardizedFileURL.path
    }

    // MARK: Finishing and cancelling

    /// Tells the delegate that `transfer` finished; `then` runs once its method returned (the
    /// acknowledgement of a transfer told at a later launch), never without a delegate.
    func finish(_ transfer: WCSessionUserInfoTransfer, error: WCError?, then: (@Sendable () -> Void)? = nil) {
        guard transfer.markFinished() else { return }
        deliver(
            { [self] delegate in
                delegate.session(self, didFinish: transfer, error: error)
                then?()
            }, otherwise: {})
    }

    func finish(_ transfer: WCSessionFileTransfer, error: WCError?, then: (@Sendable () -> Void)? = nil) {
        guard transfer.markFinished() else { return }
        if error == nil { transfer.complete() }
        deliver(
            { [self] delegate in
                delegate.session(self, didFinish: transfer, error: error)
                then?()
            }, otherwise: {})
    }

    func cancel(_ transfer: WCSessionUserInfoTransfer) {
        cancel(transfer, op: "userInfo.cancel") { [self] id in _ = transfers.removeUserInfoTransfer(id) }
    }

    func cancel(_ transfer: WCSessionFileTransfer) {
        cancel(transfer, op: "file.cancel") { [self] id in _ = transfers.removeFileTransfer(id) }
    }

    /// Sends `op` for `transfer` once it has an id; when the daemon cancelled it, forgets it.
    private func cancel(_ transfer: some SessionTransfer, op: String, forget: @escaping @Sendable (String) -> Void) {
        // From now on the outstanding lists leave it out, unless the daemon says it is too late.
        let id = transfer.transferState.withLock { state -> String? in
            guard state.isTransferring else { return nil }
            state.cancelRequested = true
            return state.transferId
        }
        guard let id, case .success(let client) = connectedClient() else { return }
        client.send(op, ["transferId": .string(id)]) { result in
            guard case .success(let answer) = result, answer["cancelled"]?.boolValue == true else {
                transfer.transferState.withLock { $0.cancelRequested = false }
                return
            }
            forget(id)
            transfer.markFinished()
        }
    }

    // MARK: Outstanding transfers

    func currentOutstandingUserInfoTransfers() -> [WCSessionUserInfoTransfer] {
        guard case .success(let client) = connectedClient(),
            case .success(let answer) = callSynchronously(client, "userInfo.outstanding"),
            let entries = answer["transfers"]?.arrayValue
        else { return transfers.localUserInfoTransfers().filter(\.isTransferring) }
        var listed: [WCSessionUserInfoTransfer] = []
        for entry in entries {
            guard let id = entry["transferId"]?.stringValue else { continue }
            let isComplication = entry["isCurrentComplicationInfo"]?.boolValue ?? false
            if let known = transfers.userInfoTransfer(id) {
                known.setCurrentComplicationInfo(isComplication)
                listed.append(known)
            } else {
                let userInfo = PropertyListConversion.dictionary(from: entry["userInfo"]?.objectValue ?? [:])
                let found = WCSessionUserInfoTransfer(
                    userInfo: userInfo, isCurrentComplicationInfo: isComplication,
                    session: self, transferId: id)
                transfers.register(found, id: id)
                listed.append(found)
            }
        }
        return (listed + transfers.waitingUserInfoTransfers().filter { waiting in !listed.contains { $0 === waiting } })
            .filter { !$0.transferState.current.cancelRequested }
    }

    func currentOutstandingFileTransfers() -> [WCSessionFileTransfer] {
        guard case .success(let client) = connectedClient(),
            case .success(let answer) = callSynchronously(client, "file.outstanding"),
            let entries = answer["transfers"]?.arrayValue
        else { return transfers.localFileTransfers().filter(\.isTransferring) }
        var listed: [WCSessionFileTransfer] = []
        for entry in entries {
            guard let id = entry["transferId"]?.stringValue else { continue }
            let total = entry["totalBytes"]?.intValue ?? 0
            let transfer: WCSessionFileTransfer
            if let known = transfers.fileTransfer(id) {
                transfer = known
            } else {
                let metadata = entry["metadata"]?.objectValue ?? [:]
                let file = WCSessionFile(
                    fileURL: URL(fileURLWithPath: entry["path"]?.stringValue ?? ""),
                    metadata: metadata.isEmpty ? nil : PropertyListConversion.dictionary(from: metadata))
                transfer = WCSessionFileTransfer(file: file, totalBytes: total, session: self, transferId: id)
                transfers.register(transfer, id: id)
            }
            transfer.update(completed: entry["completedBytes"]?.intValue ?? -1, total: total)
            listed.append(transfer)
        }
        return (listed + transfers.waitingFileTransfers().filter { waiting in !listed.contains { $0 === waiting } })
            .filter { !$0.transferState.current.cancelRequested }
    }
}

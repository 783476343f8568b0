import WatchLinkClient

/// The session's transfer objects: those waiting for the daemon's id, in call order, and
/// those the daemon named, by id, so that its `didFinish` and `progress` events find them.
final class TransferRegistry: Sendable {
    private struct Registry {
        var waiting: [AnyObject] = []
        var userInfo: [String: WCSessionUserInfoTransfer] = [:]
        var userInfoOrder: [String] = []
        var files: [String: WCSessionFileTransfer] = [:]
        var fileOrder: [String] = []
    }

    private let registry = Locked(Registry())

    /// A transfer whose request went out and whose id is not known yet.
    func addWaiting(_ transfer: AnyObject) {
        registry.withLock { $0.waiting.append(transfer) }
    }

    /// The transfer is no longer waiting for its id (the daemon answered or refused).
    func removeWaiting(_ transfer: AnyObject) {
        registry.withLock { $0.waiting.removeAll { $0 === transfer } }
    }

    func register(_ transfer: WCSessionUserInfoTransfer, id: String) {
        registry.withLock { registry in
            registry.waiting.removeAll { $0 === transfer }
            if registry.userInfo.updateValue(transfer, forKey: id) == nil { registry.userInfoOrder.append(id) }
        }
    }

    func register(_ transfer: WCSessionFileTransfer, id: String) {
        registry.withLock { registry in
            registry.waiting.removeAll { $0 === transfer }
            if registry.files.updateValue(transfer, forKey: id) == nil { registry.fileOrder.append(id) }
        }
    }

    func userInfoTransfer(_ id: String) -> WCSessionUserInfoTransfer? {
        registry.withLock { $0.userInfo[id] }
    }

    func fileTransfer(_ id: String) -> WCSessionFileTransfer? {
        registry.withLock { $0.files[id] }
    }

    /// Forgets the userInfo transfer `id` (it finished or was cancelled) and returns it.
    func removeUserInfoTransfer(_ id: String) -> WCSessionUserInfoTransfer? {
        registry.withLock { registry in
            registry.userInfoOrder.removeAll { $0 == id }
            return registry.userInfo.removeValue(forKey: id)
        }
    }

    /// Forgets the file transfer `id` (it finished or was cancelled) and returns it.
    func removeFileTransfer(_ id: String) -> WCSessionFileTransfer? {
        registry.withLock { registry in
            registry.fileOrder.removeAll { $0 == id }
            return registry.files.removeValue(forKey: id)
        }
    }

    /// The userInfo transfers known here, named ones first in registration order, then the
    /// ones waiting for their id.
    func localUserInfoTransfers() -> [WCSessionUserInfoTransfer] {
        registry.withLock { registry in
            registry.userInfoOrder.compactMap { registry.userInfo[$0] }
                + registry.waiting.compactMap { $0 as? WCSessionUserInfoTransfer }
        }
    }

    /// The file transfers known here, as ``localUserInfoTransfers()`` orders them.
    func localFileTransfers() -> [WCSessionFileTransfer] {
        registry.withLock { registry in
            registry.fileOrder.compactMap { registry.files[$0] }
                + registry.waiting.compactMap { $0 as? WCSessionFileTransfer }
        }
    }

    /// The userInfo transfers waiting for their id, in call order.
    func waitingUserInfoTransfers() -> [WCSessionUserInfoTransfer] {
        registry.withLock { $0.waiting.compactMap { $0 as? WCSessionUserInfoTransfer } }
    }

    /// The file transfers waiting for their id, in call order.
    func waitingFileTransfers() -> [WCSessionFileTransfer] {
        registry.withLock { $0.waiting.compactMap { $0 as? WCSessionFileTransfer } }
    }
}

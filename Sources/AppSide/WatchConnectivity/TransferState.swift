import WatchLinkClient

/// The mutable part of a transfer object: the daemon's id once it answered, and whether the
/// transfer is still under way.
struct TransferState {
    /// The daemon's id; `nil` until `userInfo.transfer` / `file.transfer` has answered.
    var transferId: String?
    var isTransferring = true
    /// `cancel()` was called before the daemon named the transfer: cancel it once it does.
    var cancelRequested = false
}

/// A transfer that the session tracks by the daemon's id.
protocol SessionTransfer: AnyObject, Sendable {
    var transferState: Locked<TransferState> { get }
}

extension SessionTransfer {
    /// The daemon's id, once it answered.
    var transferId: String? { transferState.current.transferId }

    /// Records the daemon's id; true when `cancel()` was called meanwhile.
    func assign(transferId: String) -> Bool {
        transferState.withLock { state in
            state.transferId = transferId
            return state.cancelRequested
        }
    }

    /// Marks the transfer over; false when it already was.
    @discardableResult
    func markFinished() -> Bool {
        transferState.withLock { state in
            defer { state.isTransferring = false }
            return state.isTransferring
        }
    }
}

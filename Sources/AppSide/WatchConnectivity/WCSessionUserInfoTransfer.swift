import Foundation
import WatchLinkClient

/// A userInfo transfer (`transferUserInfo(_:)`, `transferCurrentComplicationUserInfo(_:)`),
/// under way until its `session(_:didFinish:error:)`.
open class WCSessionUserInfoTransfer: NSObject, SessionTransfer, @unchecked Sendable {
    private let userInfoValue: UncheckedBox<[String: Any]>
    private let complication: Locked<Bool>
    private weak var session: WCSession?
    let transferState = Locked(TransferState())

    /// The dictionary being transferred.
    open var userInfo: [String: Any] { userInfoValue.value }

    /// Whether this transfer carries the current complication data (iOS).
    open var isCurrentComplicationInfo: Bool { complication.current }

    /// Whether the transfer is still under way: false once it finished or was cancelled.
    open var isTransferring: Bool { transferState.current.isTransferring }

    init(userInfo: [String: Any], isCurrentComplicationInfo: Bool, session: WCSession?, transferId: String? = nil) {
        userInfoValue = UncheckedBox(userInfo)
        complication = Locked(isCurrentComplicationInfo)
        self.session = session
        transferState.withLock { $0.transferId = transferId }
    }

    /// Cancels the transfer if it is still queued: it is never delivered and gets no
    /// `session(_:didFinish:error:)`. No effect once it is delivered or on the link.
    open func cancel() {
        session?.cancel(self)
    }

    func setCurrentComplicationInfo(_ value: Bool) {
        complication.withLock { $0 = value }
    }

    open override var description: String {
        "WCSessionUserInfoTransfer(\(transferId ?? "pending"), isTransferring: \(isTransferring), userInfo: \(userInfo))"
    }
}

import Foundation
import WatchLinkClient

/// A file transfer (`transferFile(_:metadata:)`), under way until its
/// `session(_:didFinish:error:)`.
open class WCSessionFileTransfer: NSObject, SessionTransfer, @unchecked Sendable {
    private let sessionFile: WCSessionFile
    private let transferProgress: Progress
    private weak var session: WCSession?
    let transferState = Locked(TransferState())

    /// The file being sent and its metadata.
    open var file: WCSessionFile { sessionFile }

    /// The bytes the counterpart has made durable, out of the file's size.
    open var progress: Progress { transferProgress }

    /// Whether the transfer is still under way: false once it finished or was cancelled.
    open var isTransferring: Bool { transferState.current.isTransferring }

    init(file: WCSessionFile, totalBytes: Int64, session: WCSession?, transferId: String? = nil) {
        sessionFile = file
        transferProgress = Progress(totalUnitCount: totalBytes)
        self.session = session
        transferState.withLock { $0.transferId = transferId }
    }

    /// Cancels the transfer: it stops, unless every byte is already on the link, and gets no
    /// `session(_:didFinish:error:)`.
    open func cancel() {
        session?.cancel(self)
    }

    /// The counterpart has `completed` of `total` bytes.
    func update(completed: Int64, total: Int64) {
        if total > 0, transferProgress.totalUnitCount != total { transferProgress.totalUnitCount = total }
        if completed >= 0 { transferProgress.completedUnitCount = completed }
    }

    /// The transfer is delivered: the progress is complete.
    func complete() {
        transferProgress.completedUnitCount = max(transferProgress.totalUnitCount, transferProgress.completedUnitCount)
    }

    open override var description: String {
        "WCSessionFileTransfer(\(transferId ?? "pending"), \(sessionFile.fileURL.path), isTransferring: \(isTransferring))"
    }
}

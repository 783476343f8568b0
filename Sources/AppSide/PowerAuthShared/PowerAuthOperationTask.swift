import Foundation

/// An asynchronous operation of the SDK, which can be cancelled: its completion is then not
/// called.
public protocol PowerAuthOperationTask: NSObjectProtocol {
    /// Whether the task was cancelled.
    var isCancelled: Bool { get }
    /// Cancels the task.
    func cancel()
}

/// A task that only remembers that it was cancelled (the SDK's `PA2SimpleCancelable`).
package final class CancellableTask: NSObject, PowerAuthOperationTask, @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false

    package override init() {}

    package var isCancelled: Bool { lock.withLock { cancelled } }

    package func cancel() { lock.withLock { cancelled = true } }
}

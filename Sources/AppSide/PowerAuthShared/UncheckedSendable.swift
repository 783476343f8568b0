/// A value handed across queues as the SDK hands its Objective-C blocks: an app's completion
/// runs once, on the queue the SDK names, never concurrently with itself.
package struct UncheckedSendable<Value>: @unchecked Sendable {
    package let value: Value

    package init(_ value: Value) {
        self.value = value
    }
}

import Dispatch

extension DispatchQueue {
    /// Runs an app's completion on this queue (the SDK's `dispatch_async`), the closure not
    /// checked for sendability, as an Objective-C block is not.
    package func asyncCompletion(_ body: @escaping () -> Void) {
        let box = UncheckedSendable(body)
        async { box.value() }
    }
}

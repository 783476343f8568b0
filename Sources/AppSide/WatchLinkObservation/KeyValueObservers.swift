import Foundation

/// The observers of one object's observable properties, for objects of this package that app
/// code observes with `observe(_:options:changeHandler:)` (`WCSession`): the object reports
/// each change with its old and new values, after its own lock is released, and every
/// observation of that property hears of it on the thread that changed it, as KVO does.
///
/// On Apple's platforms the observation handed out is Foundation's own `NSKeyValueObservation`
/// (it cannot be made otherwise): of a proxy object whose one property a change pokes, so that
/// `invalidate()` and releasing it end the observation as they do any other.
package final class KeyValueObservers<Root: AnyObject>: @unchecked Sendable {
    private struct Entry {
        let keyPath: AnyKeyPath
        let options: NSKeyValueObservingOptions
        /// Calls the app's handler: the root, the old and new value, whether it is the prior call.
        let notify: (Root, Any, Any, Bool) -> Void
        #if canImport(ObjectiveC)
        let proxy: ObservationProxy
        #endif
    }

    private let entries = Locked([UInt64: Entry]())
    #if canImport(ObjectiveC)
    private let deliveryLock = NSRecursiveLock()
    #endif
    private let nextId = Locked(UInt64(1))

    package init() {}

    /// Registers `handler` for `keyPath` of `root`, whose current value is `current`.
    package func observe<Value>(
        _ root: Root, _ keyPath: KeyPath<Root, Value>, current: Value, options: NSKeyValueObservingOptions,
        changeHandler: @escaping (Root, NSKeyValueObservedChange<Value>) -> Void
    ) -> NSKeyValueObservation {
        let id = nextId.withLock { next -> UInt64 in
            defer { next += 1 }
            return next
        }
        let notify: (Root, Any, Any, Bool) -> Void = { root, old, new, isPrior in
            let change = NSKeyValueObservedChange<Value>(
                kind: .setting,
                newValue: options.contains(.new) && !isPrior ? new as? Value : nil,
                oldValue: options.contains(.old) ? old as? Value : nil,
                indexes: nil, isPrior: isPrior)
            changeHandler(root, change)
        }
        let forget: () -> Void = { [weak self] in _ = self?.entries.withLock { $0.removeValue(forKey: id) } }
        #if canImport(ObjectiveC)
        let proxy = ObservationProxy()
        let observation = proxy.observe(\.token, options: []) { proxy, _ in proxy.deliver?() }
        objc_setAssociatedObject(observation, &ObservationProxy.endKey, EndOfObservation(forget), .OBJC_ASSOCIATION_RETAIN)
        entries.withLock { $0[id] = Entry(keyPath: keyPath, options: options, notify: notify, proxy: proxy) }
        #else
        let observation = NSKeyValueObservation(end: forget)
        entries.withLock { $0[id] = Entry(keyPath: keyPath, options: options, notify: notify) }
        #endif
        if options.contains(.initial) {
            changeHandler(
                root,
                NSKeyValueObservedChange(
                    kind: .setting, newValue: options.contains(.new) ? current : nil,
                    oldValue: nil, indexes: nil, isPrior: false))
        }
        return observation
    }

    /// Reports that `keyPath` of `root` changed from `old` to `new`.
    package func changed(_ root: Root, _ keyPath: AnyKeyPath, from old: Any, to new: Any) {
        let observers = entries.withLock { entries in
            entries.sorted { $0.key < $1.key }.map(\.value).filter { $0.keyPath == keyPath }
        }
        for observer in observers {
            if observer.options.contains(.prior) { deliver(observer) { observer.notify(root, old, new, true) } }
            deliver(observer) { observer.notify(root, old, new, false) }
        }
    }

    private func deliver(_ observer: Entry, _ call: @escaping () -> Void) {
        #if canImport(ObjectiveC)
        // Through the real observation, so that one invalidated hears nothing; one change at a
        // time (a handler may cause another).
        deliveryLock.lock()
        defer { deliveryLock.unlock() }
        observer.proxy.deliver = call
        observer.proxy.token &+= 1
        observer.proxy.deliver = nil
        #else
        call()
        #endif
    }

    /// Whether anyone observes anything: an object skips comparing its values when no one does.
    package var isEmpty: Bool { entries.withLock { $0.isEmpty } }
}

#if canImport(ObjectiveC)
/// What an observation made on Apple's platforms observes.
final class ObservationProxy: NSObject {
    static var endKey: UInt8 = 0
    @objc dynamic var token = 0
    var deliver: (() -> Void)?
}

/// Kept by the observation: forgets its entry when the observation is released.
private final class EndOfObservation: NSObject {
    private let end: () -> Void

    init(_ end: @escaping () -> Void) {
        self.end = end
        super.init()
    }

    deinit {
        end()
    }
}
#endif

/// A value behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

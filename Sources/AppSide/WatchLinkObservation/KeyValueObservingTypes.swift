import Foundation

#if !canImport(ObjectiveC)
// Key-value observing, as far as app code names it: Foundation on Linux has no KVO, so these are
// the types of Apple's Swift overlay (`NSKeyValueObservation`, `NSKeyValueObservedChange`,
// `NSKeyValueObservingOptions`, `NSKeyValueChange`) for the objects of this package that are
// observable (`WCSession`). On Apple's platforms Foundation's own are used.

/// The values a change reports (Foundation's `NSKeyValueObservingOptions`).
public struct NSKeyValueObservingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The change carries the new value.
    public static let new = NSKeyValueObservingOptions(rawValue: 0x01)
    /// The change carries the old value.
    public static let old = NSKeyValueObservingOptions(rawValue: 0x02)
    /// The handler runs once at once, before `observe` returns.
    public static let initial = NSKeyValueObservingOptions(rawValue: 0x04)
    /// The handler also runs before each change (`isPrior`).
    public static let prior = NSKeyValueObservingOptions(rawValue: 0x08)
}

/// The kind of a change (Foundation's `NSKeyValueChange`); a property's is `setting`.
public enum NSKeyValueChange: UInt, Sendable, Hashable {
    case setting = 1
    case insertion = 2
    case removal = 3
    case replacement = 4
}

/// One change of an observed property, as the handler of `observe(_:options:changeHandler:)`
/// gets it.
public struct NSKeyValueObservedChange<Value> {
    public typealias Kind = NSKeyValueChange
    public let kind: Kind
    /// The new value, when the options asked for `.new`.
    public let newValue: Value?
    /// The old value, when the options asked for `.old`.
    public let oldValue: Value?
    /// For to-many relationships; `nil` for a property.
    public let indexes: IndexSet?
    /// Whether this is the notification before the change (`.prior`).
    public let isPrior: Bool
}

extension NSKeyValueObservedChange: Sendable where Value: Sendable {}

/// An observation made by `observe(_:options:changeHandler:)`: it lasts until ``invalidate()``
/// or until the object is released.
public final class NSKeyValueObservation: NSObject, @unchecked Sendable {
    private let end: Locked<(() -> Void)?>

    init(end: @escaping () -> Void) {
        self.end = Locked(end)
        super.init()
    }

    /// Ends the observation: the handler is not called again.
    public func invalidate() {
        end.withLock { end -> (() -> Void)? in
            defer { end = nil }
            return end
        }?()
    }

    deinit {
        invalidate()
    }
}
#endif

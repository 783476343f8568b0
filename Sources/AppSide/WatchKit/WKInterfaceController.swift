import Foundation

/// The part of Apple's WatchKit that watch app code written around a `WKInterfaceController`
/// needs to compile: the class, its initializer and its life-cycle methods, whose default
/// implementations do nothing, as Apple's do. There is no interface to show, so nothing calls
/// them but the app's own code.
///
/// ```swift
/// class InterfaceController: WKInterfaceController {
///     override func awake(withContext context: Any?) {
///         super.awake(withContext: context)
///     }
/// }
/// ```
///
/// Apple's class is `@MainActor`; this one is not, so that an app's subclass with stored
/// properties compiles in either language mode without the Objective-C importer's leniency.
open class WKInterfaceController: NSObject {
    public override init() {
        super.init()
    }

    /// Initializes the interface controller with the specified context data.
    open func awake(withContext context: Any?) {}

    /// Tells the interface controller that the system is about to activate its view.
    open func willActivate() {}

    /// Tells the interface controller that its view appeared onscreen.
    open func didAppear() {}

    /// Tells the interface controller that its view is about to disappear.
    open func willDisappear() {}

    /// Tells the interface controller that its view is no longer active.
    open func didDeactivate() {}
}

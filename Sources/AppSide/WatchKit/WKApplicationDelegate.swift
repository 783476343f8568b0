import Foundation

/// The app-level behaviour of a watchOS app (Apple's `WKApplicationDelegate`): its life cycle
/// and the background tasks watchOS hands it. ``WKApplicationMain(_:)`` names it, as `@main`,
/// the storyboard or `WKExtensionDelegateClassName` do on a device.
///
/// Every method is optional in Apple's protocol; without the Objective-C runtime the defaults
/// stand in for the methods a delegate lacks. The default ``handle(_:)`` completes the tasks at
/// once (Apple does not say what watchOS does with a delegate that has none).
@MainActor
public protocol WKApplicationDelegate: NSObjectProtocol {
    /// The app has launched (in the foreground or, for a background task, in the background).
    func applicationDidFinishLaunching()
    /// The app is active: in the foreground, receiving events.
    func applicationDidBecomeActive()
    /// The app is about to leave the foreground.
    func applicationWillResignActive()
    /// The app is about to come to the foreground from the background.
    func applicationWillEnterForeground()
    /// The app went to the background.
    func applicationDidEnterBackground()
    /// watchOS launched or woke the app for these tasks. Complete each with
    /// `setTaskCompletedWithSnapshot(_:)` once it is done: an app whose tasks are open when its
    /// background time runs out is ended.
    func handle(_ backgroundTasks: Set<WKRefreshBackgroundTask>)
}

extension WKApplicationDelegate {
    public func applicationDidFinishLaunching() {}
    public func applicationDidBecomeActive() {}
    public func applicationWillResignActive() {}
    public func applicationWillEnterForeground() {}
    public func applicationDidEnterBackground() {}
    public func handle(_ backgroundTasks: Set<WKRefreshBackgroundTask>) {
        for task in backgroundTasks { task.setTaskCompletedWithSnapshot(false) }
    }
}

/// The delegate of a WatchKit extension (Apple's `WKExtensionDelegate`, the name before
/// watchOS 7's single-target apps): the same methods as ``WKApplicationDelegate``, whose name
/// this is here.
public typealias WKExtensionDelegate = WKApplicationDelegate

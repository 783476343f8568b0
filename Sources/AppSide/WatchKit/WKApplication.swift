import Foundation

/// The running watch app (Apple's `WKApplication`): its delegate, its state, and the background
/// tasks it schedules.
@MainActor
public final class WKApplication: NSObject {
    private static let instance = WKApplication()

    /// The app object.
    public class func shared() -> WKApplication { instance }

    /// The delegate ``WKApplicationMain(_:)`` made.
    public var delegate: (any WKApplicationDelegate)? { WatchApp.delegate }

    /// Whether the app runs in the foreground (`active`) or in the background.
    public var applicationState: WKApplicationState { WatchApp.applicationState }

    /// Schedules a background app refresh: a `WKApplicationRefreshBackgroundTask` at, not
    /// before, `preferredFireDate` ("The system attempts to wake your app in the background
    /// shortly after the scheduled time, but may delay the background task ... if your app
    /// exceeds its budget for background tasks"). One at a time: scheduling another cancels it.
    /// In the foreground at that time the task is ignored. `scheduledCompletion` runs on the
    /// main queue once it is scheduled: with a `WatchKitError` when it could not be.
    public func scheduleBackgroundRefresh(
        withPreferredDate preferredFireDate: Date, userInfo: (any NSSecureCoding & NSObjectProtocol)?,
        scheduledCompletion: @escaping ((any Error)?) -> Void
    ) {
        WatchKitConnection.shared.schedule(.applicationRefresh, at: preferredFireDate, userInfo: userInfo, completion: scheduledCompletion)
    }

    /// Schedules a snapshot refresh: a `WKSnapshotRefreshBackgroundTask` at, not before,
    /// `preferredFireDate`; one at a time.
    public func scheduleSnapshotRefresh(
        withPreferredDate preferredFireDate: Date, userInfo: (any NSSecureCoding & NSObjectProtocol)?,
        scheduledCompletion: @escaping ((any Error)?) -> Void
    ) {
        WatchKitConnection.shared.schedule(.snapshot, at: preferredFireDate, userInfo: userInfo, completion: scheduledCompletion)
    }
}

/// The running WatchKit extension (Apple's `WKExtension`, the app object before watchOS 7's
/// single-target apps): the same app as ``WKApplication``.
@MainActor
public final class WKExtension: NSObject {
    private static let instance = WKExtension()

    /// The extension object.
    public class func shared() -> WKExtension { instance }

    /// The delegate ``WKApplicationMain(_:)`` made.
    public var delegate: (any WKExtensionDelegate)? { WatchApp.delegate }

    /// Whether the app runs in the foreground (`active`) or in the background.
    public var applicationState: WKApplicationState { WatchApp.applicationState }

    /// See ``WKApplication/scheduleBackgroundRefresh(withPreferredDate:userInfo:scheduledCompletion:)``.
    public func scheduleBackgroundRefresh(
        withPreferredDate preferredFireDate: Date, userInfo: (any NSSecureCoding & NSObjectProtocol)?,
        scheduledCompletion: @escaping ((any Error)?) -> Void
    ) {
        WKApplication.shared().scheduleBackgroundRefresh(
            withPreferredDate: preferredFireDate, userInfo: userInfo,
            scheduledCompletion: scheduledCompletion)
    }

    /// See ``WKApplication/scheduleSnapshotRefresh(withPreferredDate:userInfo:scheduledCompletion:)``.
    public func scheduleSnapshotRefresh(
        withPreferredDate preferredFireDate: Date, userInfo: (any NSSecureCoding & NSObjectProtocol)?,
        scheduledCompletion: @escaping ((any Error)?) -> Void
    ) {
        WKApplication.shared().scheduleSnapshotRefresh(
            withPreferredDate: preferredFireDate, userInfo: userInfo,
            scheduledCompletion: scheduledCompletion)
    }
}

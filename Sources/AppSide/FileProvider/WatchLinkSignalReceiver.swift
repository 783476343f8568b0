/// The code of a File Provider extension that WatchLink's emulated system calls when an
/// enumerator of its domain is signalled, by a `fileprovider` push or by
/// `NSFileProviderManager.signalEnumerator(for:completionHandler:)`.
///
/// On a device the system then enumerates the container's changes through the extension's
/// `NSFileProviderEnumerator`; WatchLink does not enumerate items. This is the one call in
/// their place: the extension fetches what changed and calls `completionHandler` once, with
/// `nil` or the error, which phoned records (`push.signals`, event
/// `fileProvider.signalCompleted`) for the provider's test to see.
public protocol WatchLinkSignalReceiver: AnyObject {
    /// The enumerator of `containerItemIdentifier` in `domain` (`nil`: the default domain)
    /// was signalled.
    func didSignalEnumerator(
        for containerItemIdentifier: NSFileProviderItemIdentifier, in domain: NSFileProviderDomainIdentifier?,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void)
}

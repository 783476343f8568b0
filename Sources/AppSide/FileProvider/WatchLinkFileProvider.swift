import Foundation

/// How app code hands WatchLink's emulated File Provider system the extension of a domain:
/// WatchLink starts no extension process, so the process that plays the extension attaches
/// its object here.
public enum WatchLinkFileProvider {
    /// Makes `receiver` the running extension of `domain` (`nil`: the default domain) in this
    /// process, replacing the one attached before: from the return on, the domain's signals
    /// call its ``WatchLinkSignalReceiver/didSignalEnumerator(for:in:completionHandler:)`` on
    /// `queue` (by default a serial queue of the attachment). An
    /// ``NSFileProviderExtension`` gets `domain` as its ``NSFileProviderExtension/domain``.
    /// The receiver is held weakly.
    ///
    /// - Throws: ``NSFileProviderError`` `providerNotFound` naming the daemon when phoned
    ///   cannot be reached (see docs/app-side.md for the environment that names it).
    public static func attach(_ receiver: any WatchLinkSignalReceiver, to domain: NSFileProviderDomain?, queue: DispatchQueue? = nil) throws {
        try FileProviderSystem.shared.attach(receiver, to: domain, queue: queue)
    }

    /// Stops signalling `receiver`, for every domain it was attached to.
    public static func detach(_ receiver: any WatchLinkSignalReceiver) {
        FileProviderSystem.shared.detach(receiver)
    }
}

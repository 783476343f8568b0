import Foundation
import WatchLinkClient

/// The principal class of a (non-replicated) File Provider extension, as Apple's page
/// subclasses it. WatchLink runs no extension process of its own: the app process makes its
/// extension object and attaches it with ``WatchLinkFileProvider/attach(_:to:queue:)``, which
/// sets ``domain`` and routes the domain's signals to it.
open class NSFileProviderExtension: NSObject {
    private let attachedDomain = Locked<NSFileProviderDomain?>(nil)

    /// An extension object; the page's subclass registers for pushes in its `init()`.
    public override init() {
        super.init()
    }

    /// The domain this object serves: `nil` for the default domain (or before it is attached).
    open var domain: NSFileProviderDomain? { attachedDomain.current }

    func setDomain(_ domain: NSFileProviderDomain?) {
        attachedDomain.withLock { $0 = domain }
    }
}

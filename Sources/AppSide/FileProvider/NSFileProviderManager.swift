import Foundation
import LinkJSON
import WatchLinkClient

/// Talks to the File Provider system for one domain. Here: signals an enumerator, through
/// phoned (`fileProvider.signalEnumerator`), which records the signal (`push.signals`) and
/// hands it to the extension attached for the domain, as a `fileprovider` push does.
open class NSFileProviderManager: NSObject, @unchecked Sendable {
    /// The domain's identifier; `nil` for the default domain.
    let domainIdentifier: NSFileProviderDomainIdentifier?

    init(domainIdentifier: NSFileProviderDomainIdentifier?) {
        self.domainIdentifier = domainIdentifier
        super.init()
    }

    /// The manager of the default domain (a push without `domain`).
    open class var `default`: NSFileProviderManager { NSFileProviderManager(domainIdentifier: nil) }

    /// The manager of `domain`. Never `nil` here: WatchLink keeps no list of added domains.
    public convenience init?(for domain: NSFileProviderDomain) {
        self.init(domainIdentifier: domain.identifier)
    }

    /// Tells the system that the content of `containerItemIdentifier` changed: the extension
    /// attached for this domain is signalled, as by a `fileprovider` push. `completion` runs
    /// on a background queue once phoned has taken the signal, with
    /// ``NSFileProviderError/Code/providerNotFound`` when phoned cannot be reached.
    open func signalEnumerator(
        for containerItemIdentifier: NSFileProviderItemIdentifier,
        completionHandler completion: @escaping @Sendable ((any Error)?) -> Void
    ) {
        let finish: @Sendable ((any Error)?) -> Void = { error in DispatchQueue.global().async { completion(error) } }
        let connection: SystemConnection
        switch SystemConnection.shared(framework: FileProviderSystem.framework) {
        case .success(let shared): connection = shared
        case .failure(let failure): return finish(NSFileProviderError(.providerNotFound, failure.description))
        }
        var args: JSONObject = ["containerIdentifier": .string(containerItemIdentifier.rawValue)]
        if let domainIdentifier { args["domain"] = .string(domainIdentifier.rawValue) }
        connection.client.send("fileProvider.signalEnumerator", args) { result in
            switch result {
            case .success:
                finish(nil)
            case .failure(let error) where error.name == "invalidArgument":
                finish(NSFileProviderError(.noSuchItem, error.message))
            case .failure(let error):
                finish(NSFileProviderError(.providerNotFound, "cannot signal \(connection.location.socketPath): \(error)"))
            }
        }
    }

    /// ``signalEnumerator(for:completionHandler:)`` for async code.
    open func signalEnumerator(for containerItemIdentifier: NSFileProviderItemIdentifier) async throws {
        let error: (any Error)? = await withCheckedContinuation { continuation in
            signalEnumerator(for: containerItemIdentifier) { continuation.resume(returning: $0) }
        }
        if let error { throw error }
    }
}

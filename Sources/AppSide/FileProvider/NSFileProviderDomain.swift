import Foundation

/// A File Provider domain: one account or location of the extension, with a name for users.
open class NSFileProviderDomain: NSObject, @unchecked Sendable {
    /// What pushes and signals name the domain by.
    public let identifier: NSFileProviderDomainIdentifier
    /// The name the system shows to the user.
    public let displayName: String
    /// Where the domain's files are kept, relative to the extension's document storage.
    public let pathRelativeToDocumentStorage: String

    /// A domain with `identifier` and `displayName`.
    public init(identifier: NSFileProviderDomainIdentifier, displayName: String) {
        self.identifier = identifier
        self.displayName = displayName
        pathRelativeToDocumentStorage = identifier.rawValue
        super.init()
    }

    /// A domain with `identifier` and `displayName`, stored under `pathRelativeToDocumentStorage`.
    public init(identifier: NSFileProviderDomainIdentifier, displayName: String, pathRelativeToDocumentStorage: String) {
        self.identifier = identifier
        self.displayName = displayName
        self.pathRelativeToDocumentStorage = pathRelativeToDocumentStorage
        super.init()
    }
}

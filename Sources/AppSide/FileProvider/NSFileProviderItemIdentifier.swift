/// The persistent identifier of an item of a File Provider extension, as Apple's File
/// Provider names it: the string a `fileprovider` push carries as `container-identifier`.
public struct NSFileProviderItemIdentifier: RawRepresentable, Hashable, Sendable {
    /// The identifier as a string.
    public let rawValue: String

    /// The identifier `rawValue`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The identifier `rawValue`.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The root of the extension's hierarchy (`NSFileProviderRootContainerItemIdentifier`).
    public static let rootContainer = NSFileProviderItemIdentifier("NSFileProviderRootContainerItemIdentifier")
    /// The working set: the items the system keeps up to date even where no folder is being
    /// enumerated (`NSFileProviderWorkingSetContainerItemIdentifier`).
    public static let workingSet = NSFileProviderItemIdentifier("NSFileProviderWorkingSetContainerItemIdentifier")
    /// The parent of every trashed item (`NSFileProviderTrashContainerItemIdentifier`).
    public static let trashContainer = NSFileProviderItemIdentifier("NSFileProviderTrashContainerItemIdentifier")
}

/// The identifier of a File Provider domain: the string a `fileprovider` push carries as
/// `domain`.
public struct NSFileProviderDomainIdentifier: RawRepresentable, Hashable, Sendable {
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
}

import LinkControl
import LinkJSON

/// What a `fileprovider` push asks of the device: `signalEnumerator(for:)` on a container of
/// a domain, read from the payload `{"container-identifier", "domain"}`.
public struct FileProviderSignal: Sendable, Equatable {
    /// The kinds of container a payload can name.
    public enum Container: String, Sendable {
        /// `NSFileProviderRootContainerItemIdentifier`.
        case root
        /// `NSFileProviderWorkingSetContainerItemIdentifier`.
        case workingSet
        /// An item's own identifier.
        case item
    }

    public static let rootContainerIdentifier = "NSFileProviderRootContainerItemIdentifier"
    public static let workingSetContainerIdentifier = "NSFileProviderWorkingSetContainerItemIdentifier"

    public var containerIdentifier: String
    public var container: Container
    /// The domain identifier; `nil` for the default domain.
    public var domain: String?

    /// The signal a payload asks for, or why the device cannot use the payload.
    public static func interpret(_ payload: [UInt8]) -> Result<FileProviderSignal, UnusablePayload> {
        interpret(parsed: try? JSON.parse(payload))
    }

    /// As ``interpret(_:)``, for a payload parsed already (nil: it is not JSON).
    public static func interpret(parsed value: JSONValue?) -> Result<FileProviderSignal, UnusablePayload> {
        guard let value else { return .failure(UnusablePayload("the payload is not JSON")) }
        guard let object = value.objectValue else { return .failure(UnusablePayload("the payload is not a JSON object")) }
        guard let identifier = object["container-identifier"], !identifier.isNull else {
            return .failure(UnusablePayload("the payload has no \"container-identifier\""))
        }
        guard let text = identifier.stringValue, !text.isEmpty else {
            return .failure(UnusablePayload("\"container-identifier\" must be a non-empty string"))
        }
        var domain: String?
        if let value = object["domain"], !value.isNull {
            guard let text = value.stringValue else { return .failure(UnusablePayload("\"domain\" must be a string")) }
            domain = text
        }
        return .success(FileProviderSignal(containerIdentifier: text, domain: domain))
    }
}

extension FileProviderSignal {
    /// The signal for `containerIdentifier` of `domain` (nil: the default domain), its kind
    /// told by the identifier.
    public init(containerIdentifier: String, domain: String?) {
        let container: Container
        switch containerIdentifier {
        case Self.rootContainerIdentifier: container = .root
        case Self.workingSetContainerIdentifier: container = .workingSet
        default: container = .item
        }
        self.init(containerIdentifier: containerIdentifier, container: container, domain: domain)
    }
}

/// Why the device could not act on a push's payload.
public struct UnusablePayload: Error, Sendable, Equatable {
    public let problem: String
    public init(_ problem: String) { self.problem = problem }
}

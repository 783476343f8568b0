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
        payload.withUnsafeBufferPointer { interpretPlainObject($0) } ?? interpret(parsed: try? JSON.parse(payload))
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

extension FileProviderSignal {
    /// ``interpret(_:)`` for the payloads providers send, read where they lie: a flat JSON
    /// object whose keys and values are strings of ASCII without escapes or control
    /// characters, e.g.
    /// `{"container-identifier": "NSFileProviderWorkingSetContainerItemIdentifier", "domain":
    /// "main"}`. Such text means what `JSON.parse` makes of it (a repeated key keeps its last
    /// value), without a dictionary or a String per member; `nil` for anything else, which
    /// the parser reads.
    static func interpretPlainObject(_ text: UnsafeBufferPointer<UInt8>) -> Result<FileProviderSignal, UnusablePayload>? {
        var index = 0
        func skipWhitespace() {
            while index < text.count, text[index] == 0x20 || text[index] == 0x09 || text[index] == 0x0A || text[index] == 0x0D { index += 1 }
        }
        func take(_ byte: UInt8) -> Bool {
            guard index < text.count, text[index] == byte else { return false }
            index += 1
            return true
        }
        /// A string of ASCII without escapes or control characters; its contents.
        func plainString() -> UnsafeBufferPointer<UInt8>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            index = JSONStringBytes.skipPlain(text, from: index, nonASCIIIsPlain: false)
            while index < text.count, text[index] != UInt8(ascii: "\"") {
                guard (0x20..<0x80).contains(text[index]), text[index] != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            guard index < text.count else { return nil }
            index += 1
            return UnsafeBufferPointer(rebasing: text[start..<index - 1])
        }
        var identifier: UnsafeBufferPointer<UInt8>?
        var domain: UnsafeBufferPointer<UInt8>?
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return nil }
        skipWhitespace()
        if !take(UInt8(ascii: "}")) {
            while true {
                skipWhitespace()
                guard let key = plainString() else { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                guard let value = plainString() else { return nil }
                if Bytes.equal(key, "container-identifier") {
                    identifier = value
                } else if Bytes.equal(key, "domain") {
                    domain = value
                }
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        skipWhitespace()
        guard index == text.count else { return nil }
        guard let identifier else { return .failure(UnusablePayload("the payload has no \"container-identifier\"")) }
        guard !identifier.isEmpty else { return .failure(UnusablePayload("\"container-identifier\" must be a non-empty string")) }
        let signal: FileProviderSignal
        if Bytes.equal(identifier, rootIdentifierBytes) {
            signal = FileProviderSignal(containerIdentifier: rootContainerIdentifier, container: .root, domain: nil)
        } else if Bytes.equal(identifier, workingSetIdentifierBytes) {
            signal = FileProviderSignal(containerIdentifier: workingSetContainerIdentifier, container: .workingSet, domain: nil)
        } else {
            signal = FileProviderSignal(containerIdentifier: Bytes.text(identifier), container: .item, domain: nil)
        }
        var result = signal
        result.domain = domain.map(Bytes.text)
        return .success(result)
    }

    private static let rootIdentifierBytes = Array(rootContainerIdentifier.utf8)
    private static let workingSetIdentifierBytes = Array(workingSetContainerIdentifier.utf8)
}

/// Why the device could not act on a push's payload.
public struct UnusablePayload: Error, Sendable, Equatable {
    public let problem: String
    public init(_ problem: String) { self.problem = problem }
}

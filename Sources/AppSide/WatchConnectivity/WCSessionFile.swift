import Foundation

/// A file received from the counterpart, handed to `session(_:didReceive:)`.
open class WCSessionFile: NSObject, @unchecked Sendable {
    private let url: URL
    private let metadataValue: UncheckedBox<[String: Any]?>

    /// Where the file is now. Move it before the delegate method returns to keep it.
    open var fileURL: URL { url }

    /// The metadata the sender gave `transferFile(_:metadata:)`, `nil` when none.
    open var metadata: [String: Any]? { metadataValue.value }

    init(fileURL: URL, metadata: [String: Any]?) {
        url = fileURL
        metadataValue = UncheckedBox(metadata)
    }

    open override var description: String {
        "WCSessionFile(\(url.path)\(metadata.map { ", metadata: \($0)" } ?? ""))"
    }
}

/// Carries a value that is not `Sendable` (a property-list dictionary, a caller's closure)
/// to the session's queues; each use confines it to one queue at a time.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

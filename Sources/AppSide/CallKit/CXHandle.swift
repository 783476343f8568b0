/// How a call's other party is reached: a phone number, an email address, or a value of the
/// app's own.
open class CXHandle: NSObject, @unchecked Sendable {
    /// The kinds of handle.
    public enum HandleType: Int, Sendable, Hashable {
        case generic = 1
        case phoneNumber = 2
        case emailAddress = 3
    }

    open private(set) var type: HandleType
    open private(set) var value: String

    public init(type: HandleType, value: String) {
        self.type = type
        self.value = value
        super.init()
    }
}

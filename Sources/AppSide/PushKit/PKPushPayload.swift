import Foundation
import LinkJSON

/// A push's payload as PushKit hands it to
/// `pushRegistry(_:didReceiveIncomingPushWith:for:completion:)`.
open class PKPushPayload: NSObject, @unchecked Sendable {
    /// The push type it came as.
    open private(set) var type: PKPushType
    /// The JSON body the provider sent, as Foundation values: strings, `Int` and `Double`
    /// numbers, `Bool`, arrays, `[String: Any]` objects and `NSNull`. Empty when the body was
    /// not a JSON object.
    open private(set) var dictionaryPayload: [AnyHashable: Any]

    init(type: PKPushType, payload: JSONValue) {
        self.type = type
        var dictionary: [AnyHashable: Any] = [:]
        if case .object(let object) = payload {
            for (key, value) in object { dictionary[key] = Self.foundationValue(value) }
        }
        dictionaryPayload = dictionary
        super.init()
    }

    static func foundationValue(_ value: JSONValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .bool(let bool): return bool
        case .int(let int): return Int(int)
        case .double(let double): return double
        case .string(let string): return string
        case .array(let array): return array.map(foundationValue)
        case .object(let object):
            var dictionary: [String: Any] = [:]
            for (key, member) in object { dictionary[key] = foundationValue(member) }
            return dictionary
        }
    }
}

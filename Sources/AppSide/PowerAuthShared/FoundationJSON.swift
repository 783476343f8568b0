import Foundation
import LinkJSON

/// JSON values as the SDK's objects hold them, the way `NSJSONSerialization` makes them:
/// `NSString`, `NSNumber`, `NSArray`, `NSDictionary`, `NSNull`.
package enum FoundationJSON {
    package static func dictionary(_ object: JSONObject) -> [String: NSObject] {
        var result: [String: NSObject] = [:]
        for key in object.keys { result[key] = object[key].map(value) }
        return result
    }

    package static func value(_ json: JSONValue) -> NSObject {
        switch json {
        case .null: return NSNull()
        case .bool(let flag): return NSNumber(value: flag)
        case .int(let number): return NSNumber(value: number)
        case .double(let number): return NSNumber(value: number)
        case .string(let text): return NSString(string: text)
        case .array(let items): return NSArray(array: items.map(value))
        case .object(let object): return NSDictionary(dictionary: dictionary(object))
        }
    }
}

import Foundation
import LinkJSON
import WatchLinkClient

/// A scheduled task's `userInfo` on its way through watchd and back: the object itself stays in
/// the process that scheduled it (handed back as it was, same object), and a property-list value
/// (a dictionary, as Apple's pages describe it) also travels as JSON, so that an app launched
/// anew for the task gets an equal one. Any other object is known only to the process that
/// scheduled the task.
enum TaskUserInfo {
    private static let kept = Locked([String: UncheckedBox<any NSSecureCoding & NSObjectProtocol>]())
    private static let nextToken = Locked(UInt64(1))
    private static let process = ProcessInfo.processInfo.processIdentifier

    /// The JSON object `backgroundTask.schedule` carries for `userInfo`.
    static func encode(_ userInfo: any NSSecureCoding & NSObjectProtocol) -> JSONObject {
        let token = nextToken.withLock { next -> String in
            defer { next += 1 }
            return "\(process).\(next)"
        }
        kept.withLock { $0[token] = UncheckedBox(userInfo) }
        var object: JSONObject = ["token": .string(token)]
        if let value = try? PropertyListJSON.json(from: userInfo, path: "userInfo") { object["value"] = value }
        return object
    }

    /// The object a handed task's `userInfo` stands for.
    static func decode(_ json: JSONValue?) -> (any NSSecureCoding & NSObjectProtocol)? {
        guard let object = json?.objectValue else { return nil }
        if let token = object["token"]?.stringValue, let userInfo = kept.withLock({ $0.removeValue(forKey: token) }) {
            return userInfo.value
        }
        return object["value"].map { foundationObject(PropertyListJSON.value(from: $0)) }
    }

    /// A property-list value as the Foundation object an archive would give back.
    private static func foundationObject(_ value: Any) -> any NSSecureCoding & NSObjectProtocol {
        switch value {
        case let number as NSNumber: return number
        case let text as String: return NSString(string: text)
        case let data as Data: return NSData(data: data)
        case let date as Date: return NSDate(timeIntervalSince1970: date.timeIntervalSince1970)
        case let array as [Any]: return NSArray(array: array.map { foundationObject($0) })
        case let dictionary as [String: Any]:
            return NSDictionary(dictionary: dictionary.mapValues { foundationObject($0) as AnyObject })
        default: return NSNull()
        }
    }
}

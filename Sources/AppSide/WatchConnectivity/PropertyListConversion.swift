import Foundation
import LinkJSON
import WatchLinkClient

/// `[String: Any]` property-list dictionaries to and from the control protocol's JSON
/// (``PropertyListJSON``), with the framework's error for a value that is not one.
enum PropertyListConversion {
    /// `dictionary` as a JSON object.
    ///
    /// - Throws: ``WCError/Code/payloadUnsupportedTypes`` naming the key of the first value that
    ///   is not a property-list value.
    static func json(from dictionary: [String: Any]) throws(WCError) -> JSONObject {
        do { return try PropertyListJSON.json(from: dictionary) } catch { throw unsupported(error) }
    }

    /// `value` as JSON; `path` names it in errors (`items[2].when`).
    static func json(from value: Any, path: String) throws(WCError) -> JSONValue {
        do { return try PropertyListJSON.json(from: value, path: path) } catch { throw unsupported(error) }
    }

    private static func unsupported(_ error: PropertyListJSON.Unsupported) -> WCError {
        WCError(.payloadUnsupportedTypes, "Payload contains an unsupported type: \(error)")
    }

    /// The dictionary a JSON object stands for.
    static func dictionary(from object: JSONObject) -> [String: Any] {
        PropertyListJSON.dictionary(from: object)
    }

    /// The property-list value a JSON value stands for.
    static func value(from json: JSONValue) -> Any {
        PropertyListJSON.value(from: json)
    }
}

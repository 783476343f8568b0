#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkSession
import LinkStore
import WireProtocol

/// Reading the payloads of control ops: property-list dictionaries and `{"$data": base64}`.
extension Arguments {
    /// A property-list dictionary argument, encoded as the link carries it.
    func dictionaryPayload(_ key: String) throws -> [UInt8] {
        guard let value = value(key) else {
            throw ControlError.control(.invalidArgument, "\(op): missing required argument '\(key)'")
        }
        guard case .object(let object) = value else {
            throw ControlError.control(.invalidArgument, "\(op): '\(key)' must be an object (a property-list dictionary)")
        }
        // Straight from the request's text when it has the common form; otherwise through the
        // parsed object, which names any error.
        if let text = object.jsonText,
            let encoded = PlistJSON.encodedDictionary(jsonText: text, stringsArePlain: object.jsonTextStringsArePlain)
        {
            return encoded
        }
        let entries: [(key: String, value: PropertyListValue)]
        do {
            entries = try PlistJSON.entries(from: value, path: key)
        } catch let error as PlistJSONError {
            throw SessionError.wc(.payloadUnsupportedTypes, "\(op): \(error)")
        }
        do {
            return try PropertyListCodec.encode(entries: entries)
        } catch {
            throw SessionError.wc(.payloadUnsupportedTypes, "\(op): '\(key)' cannot be encoded as a property list: \(error)")
        }
    }

    /// A `{"$data": base64}` argument.
    func dataPayload(_ key: String) throws -> [UInt8] {
        guard let value = value(key) else {
            throw ControlError.control(.invalidArgument, "\(op): missing required argument '\(key)'")
        }
        let plist: PropertyListValue
        do {
            plist = try PlistJSON.propertyList(from: value, path: key)
        } catch {
            throw ControlError.control(.invalidArgument, "\(op): '\(key)' must be {\"$data\": \"<base64>\"}: \(error)")
        }
        guard case .data(let bytes) = plist else {
            throw ControlError.control(.invalidArgument, "\(op): '\(key)' must be {\"$data\": \"<base64>\"}")
        }
        return bytes
    }
}

import Foundation
import LinkControl
import LinkJSON

/// `Data` and dates as the control protocol writes property-list values in JSON:
/// `{"$data": "<base64>"}` and `{"$date": "<ISO 8601>"}`.
public enum WatchLinkData {
    /// `bytes` as `{"$data": "<base64>"}`.
    public static func json(_ bytes: [UInt8]) -> JSONValue {
        json(Data(bytes))
    }

    /// `data` as `{"$data": "<base64>"}`.
    public static func json(_ data: Data) -> JSONValue {
        .object([PlistJSON.dataKey: .string(data.base64EncodedString())])
    }

    /// The bytes of a `{"$data": "<base64>"}` value; `nil` when `value` is not one.
    public static func bytes(_ value: JSONValue) -> [UInt8]? {
        data(value).map { [UInt8]($0) }
    }

    /// The data of a `{"$data": "<base64>"}` value; `nil` when `value` is not one.
    public static func data(_ value: JSONValue) -> Data? {
        guard case .object(let object) = value, object.count == 1,
            let text = object[PlistJSON.dataKey]?.stringValue
        else { return nil }
        return Data(base64Encoded: text)
    }

    /// `date` as `{"$date": "<ISO 8601>"}` (UTC, milliseconds); `{"$date": null}`, which the
    /// daemon refuses naming the key, for a date no timestamp names (not finite, say).
    public static func json(_ date: Date) -> JSONValue {
        .object([PlistJSON.dateKey: ISO8601Timestamp.string(ifRepresentable: date).map { .string($0) } ?? .null])
    }

    /// The date of a `{"$date": "<ISO 8601>"}` value; `nil` when `value` is not one.
    public static func date(_ value: JSONValue) -> Date? {
        guard case .object(let object) = value, object.count == 1,
            let text = object[PlistJSON.dateKey]?.stringValue
        else { return nil }
        return ISO8601Timestamp.date(from: text)
    }
}

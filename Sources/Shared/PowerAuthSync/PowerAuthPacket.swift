#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkJSON
import WireProtocol

/// One packet of the PowerAuth SDK's watch protocol: the ASCII bytes `PAwc1` and a UTF-8 JSON
/// object holding `target`, the payload's keys, or `errorCode` / `errorDomain` / `errorMsg`.
///
/// Encoding is deterministic: `target` first, then the payload keys in the order the SDK writes
/// them, then the error keys; compact, with `/` escaped as `\/` as `NSJSONSerialization` does.
public struct PowerAuthPacket: Hashable, Sendable {
    /// The five bytes every packet starts with.
    public static let magic: [UInt8] = Array("PAwc1".utf8)
    /// Shorter data is never a packet (the SDK's own limit: the magic and 12 bytes).
    public static let minimumLength = magic.count + 12
    /// The userInfo key under which queued packets travel, as Data.
    public static let userInfoKey = "io.getlime.PowerAuth.PA2WCSessionPacket"
    /// The target of answers.
    public static let responseTarget = "*"
    public static let sessionTargetPrefix = "session:"
    public static let tokenTargetPrefix = "token:"
    /// WatchLink's extension: the phone's time adjustment for one instance.
    public static let timeTargetPrefix = "time:"

    public var target: String
    /// The payload's members (`activationCmd`, `tokenName`, `successCode`, ...), in order.
    public var payload: JSONObject
    public var error: PowerAuthError?

    public init(target: String, payload: JSONObject = [:], error: PowerAuthError? = nil) {
        self.target = target
        self.payload = payload
        self.error = error
    }

    // MARK: - Builders

    /// `{"target":"*","successCode":1}`.
    public static func success(code: Int64 = 1) -> PowerAuthPacket {
        PowerAuthPacket(target: responseTarget, payload: ["successCode": .int(code)])
    }

    /// An error answer with target `*`.
    public static func failure(_ error: PowerAuthError) -> PowerAuthPacket {
        PowerAuthPacket(target: responseTarget, error: error)
    }

    /// An activation status packet (`get_session` / `put_session`).
    public static func activationStatus(_ command: String, activationId: String? = nil, target: String) -> PowerAuthPacket {
        var payload: JSONObject = ["activationCmd": .string(command)]
        if let activationId { payload["activationId"] = .string(activationId) }
        return PowerAuthPacket(target: target, payload: payload)
    }

    /// A token packet (`get_token` / `put_token` / `remove_token`); `tokenData` is base64-encoded.
    public static func token(
        _ command: String, name: String, tokenData: [UInt8]? = nil, notFound: Bool = false,
        target: String
    ) -> PowerAuthPacket {
        var payload: JSONObject = ["tokenCmd": .string(command), "tokenName": .string(name)]
        if let tokenData { payload["tokenData"] = .string(Data(tokenData).base64EncodedString()) }
        if notFound { payload["tokenNotFound"] = .bool(true) }
        return PowerAuthPacket(target: target, payload: payload)
    }

    /// WatchLink's extension: `{"target":"time:<id>","timeCmd":"put_time","timeAdjustment":ms}`.
    public static func timeAdjustment(_ milliseconds: Int64, instanceId: String) -> PowerAuthPacket {
        PowerAuthPacket(
            target: timeTargetPrefix + instanceId,
            payload: ["timeCmd": "put_time", "timeAdjustment": .int(milliseconds)])
    }

    // MARK: - Payload readers

    public var activationCommand: String? { payload["activationCmd"]?.stringValue }
    public var activationId: String? { payload["activationId"]?.stringValue }
    public var tokenCommand: String? { payload["tokenCmd"]?.stringValue }
    public var tokenName: String? { payload["tokenName"]?.stringValue }
    /// The decoded `tokenData`, or nil when absent or not base64.
    public var tokenData: [UInt8]? {
        guard let text = payload["tokenData"]?.stringValue, let data = Data(base64Encoded: text) else { return nil }
        return Array(data)
    }
    public var tokenNotFound: Bool { payload["tokenNotFound"]?.boolValue ?? (payload["tokenNotFound"]?.intValue).map { $0 != 0 } ?? false }
    public var successCode: Int64? { payload["successCode"]?.intValue }

    /// Whether the activation status payload is one the SDK accepts.
    public var hasValidActivationStatus: Bool {
        activationCommand == "get_session" || activationCommand == "put_session"
    }

    /// Whether the token payload is one the SDK accepts: a name always, and for `put_token`
    /// token data or `tokenNotFound`.
    public var hasValidTokenPayload: Bool {
        guard let name = tokenName, !name.isEmpty else { return false }
        switch tokenCommand {
        case "get_token", "remove_token": return true
        case "put_token": return !(tokenData ?? []).isEmpty || tokenNotFound
        default: return false
        }
    }

    // MARK: - Bytes

    /// The packet's bytes: `PAwc1` and the JSON object.
    public func encoded() -> [UInt8] {
        var object: JSONObject = ["target": .string(target)]
        if let error {
            object["errorCode"] = .int(error.code)
            object["errorDomain"] = .string(error.domain)
            if let message = error.message { object["errorMsg"] = .string(message) }
        } else {
            for key in payload.keys where key != "target" { object[key] = payload[key] }
        }
        var json: [UInt8] = []
        JSON.serialize(.object(object), into: &json)
        var bytes = Self.magic
        bytes.reserveCapacity(json.count + 8)
        for byte in json {
            // Outside strings JSON has no '/', so every one is inside a string.
            if byte == UInt8(ascii: "/") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        return bytes
    }

    /// What ``decode(_:)`` makes of some bytes.
    public enum Decoding: Hashable, Sendable {
        /// Not a PowerAuth packet: too short or without the magic. The SDK returns "not processed".
        case notProcessed
        /// Starts with the magic but is not a JSON object with a string `target`: the SDK
        /// consumes it and answers an error.
        case broken(String)
        case packet(PowerAuthPacket)
    }

    /// Reads a packet the way the SDK's session manager does.
    public static func decode(_ bytes: [UInt8]) -> Decoding {
        guard carriesMagic(bytes) else { return .notProcessed }
        let value: JSONValue
        do { value = try JSON.parse(bytes[magic.count...]) } catch {
            return .broken("the packet's JSON is invalid: \(error)")
        }
        guard case .object(var object) = value else {
            return .broken("the packet's JSON is \(value.typeName), not an object")
        }
        guard let target = object["target"]?.stringValue else {
            return .broken("the packet has no string 'target'")
        }
        object.removeValue(forKey: "target")
        var error: PowerAuthError?
        if let code = object["errorCode"]?.intValue {
            error = PowerAuthError(
                code: code, domain: object["errorDomain"]?.stringValue ?? PowerAuthError.domain,
                message: object["errorMsg"]?.stringValue)
            for key in ["errorCode", "errorDomain", "errorMsg"] { object.removeValue(forKey: key) }
        }
        return .packet(PowerAuthPacket(target: target, payload: object, error: error))
    }

    /// Whether the SDK's `processReceivedMessageData` would take these bytes (return YES):
    /// `decode(bytes) != .notProcessed`, without reading the packet (asked of every message
    /// data a session receives).
    @Sendable public static func isProcessed(_ bytes: [UInt8]) -> Bool {
        carriesMagic(bytes)
    }

    /// Whether `bytes` are long enough for a packet and start with the magic: all that decides
    /// whether the SDK takes them.
    private static func carriesMagic(_ bytes: [UInt8]) -> Bool {
        bytes.count >= minimumLength && bytes.starts(with: magic)
    }

    /// The packet bytes of a userInfo dictionary, when it holds Data under ``userInfoKey``.
    public static func packetBytes(inUserInfo encoded: [UInt8]) -> [UInt8]? {
        guard let dictionary = try? PropertyListCodec.decodeDictionary(encoded),
            case .data(let bytes)? = dictionary[userInfoKey]
        else { return nil }
        return bytes
    }

    /// The userInfo dictionary, encoded, that carries `bytes` as queued delivery does.
    public static func userInfo(carrying bytes: [UInt8]) throws -> [UInt8] {
        try PropertyListCodec.encode([userInfoKey: .data(bytes)])
    }
}

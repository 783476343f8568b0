#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
import LinkJSON

/// A token as the SDK serialises it inside `tokenData` (`PA2PrivateTokenData`): the JSON
/// object `{"name","id","aid","af","sec"}`, `af` the factor mask the token was created with
/// and `sec` the base64 of the 16-byte secret.
public struct PowerAuthTokenData: Hashable, Sendable {
    public static let secretLength = 16

    public var name: String
    public var identifier: String
    public var activationId: String?
    /// The SDK's factor mask (possession 0x1, knowledge 0x10, biometry 0x100); 0 when unknown.
    public var authenticationFactors: Int
    public var secret: [UInt8]

    public init(name: String, identifier: String, activationId: String?, authenticationFactors: Int, secret: [UInt8]) {
        self.name = name
        self.identifier = identifier
        self.activationId = activationId
        self.authenticationFactors = authenticationFactors
        self.secret = secret
    }

    /// The JSON bytes, keys in the order name, id, aid, af, sec (`/` escaped as `\/`).
    public func serialized() -> [UInt8] {
        var object: JSONObject = ["name": .string(name), "id": .string(identifier)]
        if let activationId { object["aid"] = .string(activationId) }
        object["af"] = .int(Int64(authenticationFactors))
        object["sec"] = .string(Data(secret).base64EncodedString())
        var json: [UInt8] = []
        JSON.serialize(.object(object), into: &json)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(json.count + 4)
        for byte in json {
            if byte == UInt8(ascii: "/") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        return bytes
    }

    /// Reads token data as the SDK does: nil unless it has a name, an id and a 16-byte secret;
    /// a missing or non-numeric `af` reads as 0.
    public static func deserialize(_ bytes: [UInt8]) -> PowerAuthTokenData? {
        guard case .object(let object)? = try? JSON.parse(bytes),
            let name = object["name"]?.stringValue,
            let identifier = object["id"]?.stringValue,
            let secretText = object["sec"]?.stringValue,
            let secret = Data(base64Encoded: secretText), secret.count == secretLength
        else { return nil }
        return PowerAuthTokenData(
            name: name, identifier: identifier, activationId: object["aid"]?.stringValue,
            authenticationFactors: Int(truncatingIfNeeded: object["af"]?.intValue ?? 0), secret: Array(secret))
    }
}

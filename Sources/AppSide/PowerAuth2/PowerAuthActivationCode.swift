import Foundation

/// A parsed activation code: `XXXXX-XXXXX-XXXXX-XXXXX` and, from a QR code, the signature
/// after `#`.
public final class PowerAuthActivationCode: NSObject, @unchecked Sendable {
    /// The code without the signature.
    public let activationCode: String
    /// The base64 signature of a scanned code; empty when there is none, as the SDK's.
    public let activationSignature: String?

    init(activationCode: String, activationSignature: String) {
        self.activationCode = activationCode
        self.activationSignature = activationSignature
    }
}

/// The SDK's checks of activation codes (`OtpUtil.cpp`): twenty Base32 characters in four
/// groups, whose twelve bytes end with the CRC-16/ARC of the first ten, big-endian.
public final class PowerAuthActivationCodeUtil: NSObject {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Whether a character typed by the user can be part of a code (`A`–`Z`, `2`–`7`).
    @discardableResult
    public static func validateTypedCharacter(_ character: UInt32) -> Bool {
        (0x41...0x5A).contains(character) || (0x32...0x37).contains(character)
    }

    /// A typed character made valid: lowercase to uppercase, `0` to `O`, `1` to `I`; 0 when it
    /// cannot be.
    @discardableResult
    public static func validateAndCorrectTypedCharacter(_ character: UInt32) -> UInt32 {
        if validateTypedCharacter(character) { return character }
        if (0x61...0x7A).contains(character) { return character - 0x20 }
        if character == 0x30 { return 0x4F }
        if character == 0x31 { return 0x49 }
        return 0
    }

    /// Whether `code` is a valid activation code (without a signature).
    @discardableResult
    public static func validateActivationCode(_ code: String) -> Bool {
        let characters = Array(code.utf8)
        guard characters.count == 23 else { return false }
        var symbols: [UInt8] = []
        for (index, character) in characters.enumerated() {
            if index % 6 == 5 {
                guard character == UInt8(ascii: "-") else { return false }
            } else {
                symbols.append(character)
            }
        }
        guard let bytes = base32Decode(symbols), bytes.count == 12 else { return false }
        return crc16(bytes.prefix(10)) == UInt16(bytes[10]) << 8 | UInt16(bytes[11])
    }

    /// Whether `code` is a valid recovery code: an activation code, or one after the `R:` of a
    /// scanned recovery QR code (`OtpUtil::validateRecoveryCode`, which drops the first two
    /// characters of any code that contains `R:`).
    @discardableResult
    public static func validateRecoveryCode(_ code: String) -> Bool {
        guard code.contains("R:") else { return validateActivationCode(code) }
        return validateActivationCode(String(decoding: Array(code.utf8).dropFirst(2), as: UTF8.self))
    }

    /// Whether `puk` is a valid recovery PUK: ten digits (`OtpUtil::validateRecoveryPuk`).
    @discardableResult
    public static func validateRecoveryPuk(_ puk: String) -> Bool {
        let characters = Array(puk.utf8)
        return characters.count == 10 && characters.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// A scanned or typed code parsed, its signature (after `#`, valid base64) separated; nil
    /// when either is not valid.
    @discardableResult
    public static func parse(fromActivationCode activationCode: String) -> PowerAuthActivationCode? {
        var code = activationCode
        var signature = ""
        if let hash = activationCode.firstIndex(of: "#") {
            code = String(activationCode[..<hash])
            signature = String(activationCode[activationCode.index(after: hash)...])
            guard let decoded = Data(base64Encoded: signature), !decoded.isEmpty else { return nil }
        }
        guard validateActivationCode(code) else { return nil }
        return PowerAuthActivationCode(activationCode: code, activationSignature: signature)
    }

    /// RFC 4648 Base32 without padding, rejecting a non-canonical end (leftover bits not zero).
    private static func base32Decode(_ symbols: [UInt8]) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for symbol in symbols {
            guard let value = alphabet.firstIndex(of: symbol) else { return nil }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return bytes
    }

    /// CRC-16/ARC: reflected polynomial 0x8005 (0xA001), initial value 0, no final XOR.
    private static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}

/// How an activation is created: from an activation code (the one kind WatchLink's emulated
/// server takes).
public final class PowerAuthActivation: NSObject, @unchecked Sendable {
    /// The parsed code.
    public let activationCode: PowerAuthActivationCode?
    /// The activation's name, e.g. the device's.
    public private(set) var name: String?
    /// Extra attributes for the app's server.
    public private(set) var extras: String?
    /// Custom attributes for the app's server.
    public private(set) var customAttributes: [String: Any]?
    /// What the activation is made with: `"CODE"`.
    public let activationType = "CODE"
    /// The attributes that prove the user's identity: `{"code": …}`.
    public var identityAttributes: [String: String] { ["code": activationCode?.activationCode ?? ""] }

    private init(code: PowerAuthActivationCode, name: String?) {
        activationCode = code
        self.name = name
    }

    /// An activation from a code (with or without the signature of a QR code).
    /// - Throws: `PowerAuthErrorCode.invalidActivationCode` for a code that is not valid.
    public convenience init(activationCode: String, name: String? = nil) throws {
        guard let code = PowerAuthActivationCodeUtil.parse(fromActivationCode: activationCode) else {
            throw PowerAuthErrorCode.invalidActivationCode.error()
        }
        self.init(code: code, name: name)
    }

    /// Sets the activation's name.
    @discardableResult
    public func with(activationName name: String) -> PowerAuthActivation {
        self.name = name
        return self
    }

    /// Sets the extra attributes.
    @discardableResult
    public func with(extras: String?) -> PowerAuthActivation {
        self.extras = extras
        return self
    }

    /// Sets the custom attributes.
    @discardableResult
    public func with(customAttributes: [String: Any]?) -> PowerAuthActivation {
        self.customAttributes = customAttributes
        return self
    }
}

/// What a created activation gives the app.
public final class PowerAuthActivationResult: NSObject, @unchecked Sendable {
    /// The activation's fingerprint, for the user to compare with the server's. WatchLink's is
    /// a stand-in (see docs/powerauth.md).
    public var activationFingerprint: String
    /// Recovery data (never: not emulated).
    public var activationRecovery: AnyObject?
    /// The server's custom attributes (never: not emulated).
    public var customAttributes: [String: NSObject]?

    init(activationFingerprint: String) {
        self.activationFingerprint = activationFingerprint
    }
}

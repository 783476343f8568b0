import PowerAuthServer
import PowerAuthSync
import WireProtocol

/// Decodes the input as a PowerAuth watch packet (raw and inside a userInfo dictionary), as
/// token data and as an activation status blob (plain and encrypted); every packet and blob
/// that decodes must re-encode to one that decodes to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkPacket(bytes)
    checkPacket(PowerAuthPacket.magic + bytes)
    if let inner = PowerAuthPacket.packetBytes(inUserInfo: bytes) { checkPacket(inner) }
    if let token = PowerAuthTokenData.deserialize(bytes) {
        precondition(PowerAuthTokenData.deserialize(token.serialized()) == token, "token data changes across serialize")
    }
    checkStatusBlob(bytes)
    return 0
}

private let transportKey = [UInt8](repeating: 0x4B, count: 16)
private let challenge = [UInt8](repeating: 0x43, count: 16)
private let nonce = [UInt8](repeating: 0x4E, count: 16)

private func checkStatusBlob(_ bytes: [UInt8]) {
    if let blob = try? StatusBlob.decode(bytes) {
        precondition((try? StatusBlob.decode(blob.encoded())) == blob, "a status blob changes across encode and decode")
    }
    if let blob = try? StatusBlobCipher.decrypt(bytes, transportKey: transportKey, challenge: challenge, nonce: nonce),
        let encrypted = try? StatusBlobCipher.encrypt(blob, transportKey: transportKey, challenge: challenge, nonce: nonce)
    {
        precondition(
            (try? StatusBlobCipher.decrypt(encrypted, transportKey: transportKey, challenge: challenge, nonce: nonce)) == blob,
            "an encrypted status blob changes across encrypt and decrypt")
    }
}

private func checkPacket(_ bytes: [UInt8]) {
    guard case .packet(let packet) = PowerAuthPacket.decode(bytes) else { return }
    _ = packet.activationCommand
    _ = packet.activationId
    _ = packet.tokenCommand
    _ = packet.tokenName
    _ = packet.tokenData
    _ = packet.tokenNotFound
    _ = packet.successCode
    _ = packet.hasValidActivationStatus
    _ = packet.hasValidTokenPayload
    let encoded = packet.encoded()
    guard case .packet(let again) = PowerAuthPacket.decode(encoded) else {
        preconditionFailure("an encoded packet does not decode: \(String(decoding: encoded, as: UTF8.self))")
    }
    precondition(again.target == packet.target && again.error == packet.error, "a packet changes across encode and decode")
    if let tokenData = packet.tokenData { _ = PowerAuthTokenData.deserialize(tokenData) }
}

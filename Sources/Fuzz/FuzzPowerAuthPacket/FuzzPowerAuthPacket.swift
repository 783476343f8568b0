import PowerAuthSync
import WireProtocol

/// Decodes the input as a PowerAuth watch packet (raw and inside a userInfo dictionary) and as
/// token data; every packet that decodes must re-encode to one that decodes to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkPacket(bytes)
    checkPacket(PowerAuthPacket.magic + bytes)
    if let inner = PowerAuthPacket.packetBytes(inUserInfo: bytes) { checkPacket(inner) }
    if let token = PowerAuthTokenData.deserialize(bytes) {
        precondition(PowerAuthTokenData.deserialize(token.serialized()) == token, "token data changes across serialize")
    }
    return 0
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

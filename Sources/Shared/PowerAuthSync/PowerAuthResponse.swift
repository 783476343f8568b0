/// Reading the answer to a request sent with a response, as the SDK's `sendPacketWithResponse`
/// does with the response class it names: the data must be a packet, an error packet is its
/// error, and the payload must be of the expected class.
enum PowerAuthResponse {
    /// The payload class a request expects back (`PA2WCSessionPacket_Success`, ...).
    enum Expected: String {
        case success = "PA2WCSessionPacket_Success"
        case activationStatus = "PA2WCSessionPacket_ActivationStatus"
        case tokenData = "PA2WCSessionPacket_TokenData"

        /// What a request of `command` expects back.
        init(request command: String) {
            switch command {
            case "get_session": self = .activationStatus
            case "get_token": self = .tokenData
            default: self = .success
            }
        }

        func validates(_ packet: PowerAuthPacket) -> Bool {
            switch self {
            case .success: return packet.successCode != nil
            case .activationStatus: return packet.hasValidActivationStatus
            case .tokenData: return packet.hasValidTokenPayload
            }
        }
    }

    static func read(_ bytes: [UInt8], expecting expected: Expected) -> Result<PowerAuthPacket, PowerAuthError> {
        switch PowerAuthPacket.decode(bytes) {
        case .notProcessed:
            return .failure(.watchConnectivity("PA2WCSessionManager: Received response is in unknown data format."))
        case .broken:
            return .failure(.watchConnectivity("PA2WCSessionManager: Cannot process received response."))
        case .packet(let response):
            if let error = response.error { return .failure(error) }
            guard expected.validates(response) else {
                return .failure(.watchConnectivity("PA2WCSessionManager: Invalid payload. \(expected.rawValue) class is expected."))
            }
            return .success(response)
        }
    }
}

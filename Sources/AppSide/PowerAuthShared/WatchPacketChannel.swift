import Dispatch
import Foundation
import LinkJSON
import WatchConnectivity

/// The SDK's `PowerAuthWCSessionManager` behind the public class of each side: PowerAuth's
/// packets travel as the app's own WatchConnectivity traffic, on `WCSession.default`, and what
/// they mean is the daemon's (`pa.packet.*`), which keeps the state they read and change.
package final class WatchPacketChannel: @unchecked Sendable {
    /// The five bytes every packet starts with; shorter data than the magic and 12 bytes is
    /// never a packet (`PA2WCSessionManager.m`).
    static let magic = Data("PAwc1".utf8)
    static let minimumLength = magic.count + 12
    /// The key under which a packet travels in a userInfo.
    package static let userInfoKey = "io.getlime.PowerAuth.PA2WCSessionPacket"
    /// What the SDK answers when it cannot make a response (here: the daemon did not answer).
    private static let noResponse = Data(
        #"PAwc1{"target":"*","errorCode":15,"errorDomain":"PowerAuthErrorDomain","errorMsg":"PA2WCSessionManager: Cannot create response packet."}"#.utf8)

    package let device: PowerAuthDevice
    private let isPhone: Bool

    package init(device: PowerAuthDevice, isPhone: Bool) {
        self.device = device
        self.isPhone = isPhone
    }

    /// The session, when it can carry packets: activated, and on iOS paired with the watch app
    /// installed.
    package var validSession: WCSession? {
        let session = WCSession.default
        guard session.activationState == .activated else { return nil }
        if isPhone, !(session.isPaired && session.isWatchAppInstalled) { return nil }
        return session
    }

    // MARK: Receiving

    /// `processReceivedMessageData(_:replyHandler:)`: false for data that is not PowerAuth's;
    /// otherwise the packet is handed to the daemon, and the reply handler, when there is one,
    /// is called before this returns, as the SDK calls it.
    package func processReceivedMessageData(_ data: Data, replyHandler: ((Data) -> Void)?) -> Bool {
        guard data.count >= Self.minimumLength, data.starts(with: Self.magic) else { return false }
        let args: JSONObject = ["data": .string(data.base64EncodedString()), "wantsReply": .bool(replyHandler != nil)]
        switch device.call("pa.packet.process", args) {
        case .success(let answer):
            if let replyHandler {
                replyHandler(answer["reply"]?.stringValue.flatMap { Data(base64Encoded: $0) } ?? Self.noResponse)
            }
            if let send = answer["send"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) { sendPacket(send) }
        case .failure(let error):
            device.log("PA2WCSessionManager: cannot process a packet: \(error.localizedDescription)")
            replyHandler?(Self.noResponse)
        }
        return true
    }

    /// `processReceivedUserInfo(_:)`: a userInfo with packet Data under the SDK's key.
    package func processReceivedUserInfo(_ userInfo: [String: Any]) -> Bool {
        guard let data = userInfo[Self.userInfoKey] as? Data else { return false }
        return processReceivedMessageData(data, replyHandler: nil)
    }

    // MARK: Sending

    /// `sendPacket:`: a message while the counterpart is reachable (a userInfo when that fails,
    /// except for the errors no userInfo would survive), a userInfo otherwise.
    package func sendPacket(_ packet: Data) {
        guard let session = validSession else {
            device.log("PA2WCSessionManager: WCSession is currently not available for messaging.")
            return
        }
        guard session.isReachable else {
            session.transferUserInfo([Self.userInfoKey: packet])
            return
        }
        session.sendMessageData(packet, replyHandler: nil) { [device] error in
            let code = (error as NSError).code
            if (error as NSError).domain == WCErrorDomain,
                [WCError.Code.sessionNotSupported, .sessionNotActivated, .deviceNotPaired, .watchAppNotInstalled].map(\.rawValue).contains(code)
            {
                device.log("PA2WCSessionManager: a packet failed to deliver: \(error.localizedDescription)")
                return
            }
            session.transferUserInfo([Self.userInfoKey: packet])
        }
    }

    /// `sendPacketWithResponse:`: needs a valid, reachable session; `completion` gets the
    /// answer's data or the error (PowerAuth's 15, or the WatchConnectivity error of the send),
    /// on the session's queue.
    package func sendPacketWithResponse(_ packet: Data, completion: @escaping (Result<Data, NSError>) -> Void) {
        guard let session = validSession else {
            return completion(.failure(PowerAuthErrorCode.watchConnectivity.error("PA2WCSessionManager: WCSession is currently not available for messaging.")))
        }
        guard session.isReachable else {
            return completion(.failure(PowerAuthErrorCode.watchConnectivity.error("PA2WCSessionManager: The counterpart device is not reachable.")))
        }
        let completion = UncheckedSendable(completion)
        session.sendMessageData(
            packet, replyHandler: { completion.value(.success($0)) },
            errorHandler: { completion.value(.failure($0 as NSError)) })
    }

    /// A request of `command` for `instanceId` (`pa.packet.make`), sent with a response whose
    /// answer the daemon reads (`pa.packet.response`); `completion` runs on the main queue, as
    /// the SDK's completion blocks do.
    package func request(
        _ command: String, instanceId: String, name: String? = nil,
        completion: @escaping (Result<JSONObject, NSError>) -> Void
    ) {
        var args: JSONObject = ["instanceId": .string(instanceId), "command": .string(command)]
        if let name { args["name"] = .string(name) }
        let finish: (Result<JSONObject, NSError>) -> Void = { result in DispatchQueue.main.asyncCompletion { completion(result) } }
        let packet: Data
        switch device.call("pa.packet.make", args) {
        case .success(let answer):
            guard let data = answer["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else {
                return finish(.failure(PowerAuthErrorCode.watchConnectivity.error("PA2WCSessionManager: Missing request packet in send method.")))
            }
            packet = data
        case .failure(let error):
            return finish(.failure(error))
        }
        sendPacketWithResponse(packet) { [device] sent in
            switch sent {
            case .failure(let error):
                finish(.failure(error))
            case .success(let reply):
                var read = args
                read["data"] = .string(reply.base64EncodedString())
                finish(device.call("pa.packet.response", read))
            }
        }
    }

    /// A request of `command` sent lazily; false when the session cannot carry it.
    package func requestLazily(_ command: String, instanceId: String, name: String? = nil) -> Bool {
        guard validSession != nil else { return false }
        var args: JSONObject = ["instanceId": .string(instanceId), "command": .string(command)]
        if let name { args["name"] = .string(name) }
        switch device.call("pa.packet.make", args) {
        case .success(let answer):
            guard let data = answer["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else { return false }
            sendPacket(data)
            return true
        case .failure(let error):
            device.log("cannot make the packet of '\(command)': \(error.localizedDescription)")
            return false
        }
    }
}

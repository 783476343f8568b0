// swift-format-ignore-file
import CallKit
import PushKit

// Apple's "Responding to VoIP Notifications from PushKit", as written there, in a file that
// imports only CallKit and PushKit: it must compile unchanged against WatchLink's modules.
// (`completion` is `@Sendable`, as the SDK declares it; the page predates the annotation.)

final class VoipCall {
    let uuid: UUID
    let phoneNumber: CXHandle

    init(_ uuid: UUID, phoneNumber: CXHandle) {
        self.uuid = uuid
        self.phoneNumber = phoneNumber
    }
}

final class CallManager: NSObject, CXProviderDelegate, @unchecked Sendable {
    private(set) var calls: [VoipCall] = []

    func addCall(_ call: VoipCall) { calls.append(call) }

    func providerDidReset(_ provider: CXProvider) { calls.removeAll() }
}

final class VoIPPushHandler: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
    var callProvider: CXProvider?
    let callManager = CallManager()
    private(set) var connections: [UUID] = []

    func configure() {
        // Configure the app's CallKit provider object.
        let config = CXProviderConfiguration(localizedName: "VoIP Service")
        config.supportsVideo = true
        config.supportedHandleTypes = [.phoneNumber]
        config.maximumCallsPerCallGroup = 1

        // Create the provider and attach the custom delegate object
        // used by the app to respond to updates.
        callProvider = CXProvider(configuration: config)
        callProvider?.setDelegate(callManager, queue: nil)
    }

    func establishConnection(for callUUID: UUID) {
        connections.append(callUUID)
    }

    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {}

    func pushRegistry(_ registry: PKPushRegistry,
              didReceiveIncomingPushWith payload: PKPushPayload,
              for type: PKPushType,
              completion: @escaping @Sendable () -> Void) {
       if type == .voIP {
          // Extract the call information from the push notification payload
          if let handle = payload.dictionaryPayload["handle"] as? String,
                let uuidString = payload.dictionaryPayload["callUUID"] as? String,
                let callUUID = UUID(uuidString: uuidString) {

             // Configure the call information data structures.
             let callUpdate = CXCallUpdate()
             let phoneNumber = CXHandle(type: .phoneNumber, value: handle)
             callUpdate.remoteHandle = phoneNumber

             // Report the call to CallKit, and let it display the call UI.
             callProvider?.reportNewIncomingCall(with: callUUID,
                         update: callUpdate, completion: { (error) in
                if error == nil {
                   // If the system allows the call to proceed, make a data record for it.
                   let newCall = VoipCall(callUUID, phoneNumber: phoneNumber)
                   self.callManager.addCall(newCall)
                }

                // Tell PushKit that the notification is handled.
                completion()
             })

             // Asynchronously register with the telephony server and
             // process the call. Report updates to CallKit as needed.
             establishConnection(for: callUUID)
          }
       }
    }
}

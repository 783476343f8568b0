import LinkDaemon
import LinkJSON
import LinkRuntime
import LinkSession

/// Who on the device gets what a push brings, and the OS's rules around it (docs/push.md,
/// "Pushes and the app's launch"):
///
/// - The processes of the app that registered for pushes (`push.register`) get `push.received`.
///   With none, an installed app is launched into the background and the push waits for its
///   registration: "the system launches or wakes your app and delivers the notification to
///   your app's PKPushRegistry object" (Responding to VoIP Notifications from PushKit).
/// - The File Provider extension attached for a push's domain (`fileProvider.attach`) gets the
///   signal; with none, an installed extension is run and handed the signals it has not answered.
/// - A VoIP push whose PushKit completion handler runs before a call was reported to CallKit
///   gets the app terminated ("On iOS 13.0 and later, if you fail to report a call to CallKit,
///   the system will terminate your app"); after ``voipFailureLimit`` such pushes, VoIP pushes
///   are no longer delivered ("Repeatedly failing to report calls may cause the system to stop
///   delivering any more VoIP push notifications to your app"). Apple gives no number.
///   Installing the app again starts afresh.
///
/// The rules that launch and end the app apply to an installed app (`app.install`); without
/// one, pushes go to whichever process subscribed, as before.
final class PushRecipients {
    /// VoIP pushes not reported to CallKit before the OS stops delivering them (`--voip-failure-limit`).
    static let standardVoIPFailureLimit = 3
    /// Pushes kept for an app that has not registered yet, the newest.
    static let heldCapacity = 100

    private let apps: AppLauncher
    private let logger: Logger
    private let publish: (String, JSONObject) -> Void
    private let sendEvent: (String, JSONObject, UInt64) -> Void
    let voipFailureLimit: Int

    /// Control connections that registered for pushes (a process of the app, or its extension).
    private var registrants: Set<UInt64> = []
    /// `push.received` events waiting for a registration, oldest first, with their types.
    private var held: [(type: PushKitType, event: JSONObject)] = []
    private var nextPushId: Int64 = 1
    /// Extensions attached, by connection: the domain each serves (`""`: the default domain).
    private var extensions: [UInt64: String] = [:]
    /// Delivered VoIP pushes whose completion handler has not run, and whether a call was
    /// reported to CallKit since.
    private var voipAwaiting: [Int64: Bool] = [:]
    private(set) var voipFailures = 0
    /// The calls reported to CallKit, by UUID.
    private var reportedCalls: Set<String> = []

    init(
        apps: AppLauncher, logger: Logger, voipFailureLimit: Int, publish: @escaping (String, JSONObject) -> Void,
        sendEvent: @escaping (String, JSONObject, UInt64) -> Void
    ) {
        self.apps = apps
        self.logger = logger
        self.voipFailureLimit = voipFailureLimit
        self.publish = publish
        self.sendEvent = sendEvent
        apps.observeInstalls { [unowned self] kind in
            guard kind == .app else { return }
            voipFailures = 0
            voipAwaiting.removeAll()
        }
    }

    // MARK: Pushes for the app

    /// Whether a push of `type` is kept for the app even with no one listening: it launches it.
    func holdsFor(_ type: PushKitType) -> Bool {
        apps.isInstalled(.app) || (type == .fileProvider && apps.isInstalled(.fileProvider))
    }

    /// Delivers `event` (`push.received` of a push of `type`), or holds it for the app it launches.
    func deliver(_ type: PushKitType, _ event: JSONObject) {
        var event = event
        let id = nextPushId
        nextPushId += 1
        event["id"] = .int(id)
        guard holdsFor(type) else { return publish("push.received", event) }
        if type == .voIP, voipFailures >= voipFailureLimit {
            logger.warning("push: a VoIP push is not delivered: the app failed to report \(voipFailures) VoIP pushes to CallKit")
            var dropped = event
            dropped["reason"] = "voipNotReportedToCallKit"
            return publish("push.dropped", dropped)
        }
        if type == .voIP { voipAwaiting[id] = false }
        guard registrants.isEmpty else { return publish("push.received", event) }
        if held.count >= Self.heldCapacity { held.removeFirst() }
        held.append((type, event))
        // A fileprovider push runs the extension, where one is installed; others launch the app.
        let kind: InstalledProgramKind = type == .fileProvider && apps.isInstalled(.fileProvider) ? .fileProvider : .app
        if case .failure(let failure) = apps.launch(kind, reason: .push) {
            logger.warning("push: a \(type.rawValue) push waits for the app, which was not launched: \(failure)")
        }
    }

    /// `push.register` of a connection: it gets pushes from now on, the held ones first.
    func registered(_ client: UInt64?, types: [PushKitType]) {
        guard let client else { return }
        if types.isEmpty { registrants.remove(client) } else { registrants.insert(client) }
        let ready = held.filter { types.contains($0.type) }
        held.removeAll { types.contains($0.type) }
        for push in ready { publish("push.received", push.event) }
    }

    // MARK: File Provider signals

    /// Whether an extension is attached for `domain` (nil: the default domain).
    func hasExtension(for domain: String?) -> Bool {
        extensions.values.contains(domain ?? "")
    }

    /// A signal found no extension attached for its domain: the installed extension is run.
    func runExtension(for domain: String?) {
        guard apps.isInstalled(.fileProvider) else { return }
        if case .failure(let failure) = apps.launch(.fileProvider, reason: .push) {
            logger.warning("push: the File Provider extension for \(domain ?? "the default domain") was not run: \(failure)")
        }
    }

    /// `fileProvider.attach`: the connection's process is the extension of `domain`; it is
    /// handed `pending`, the signals of that domain not answered yet.
    func attachedExtension(_ client: UInt64, domain: String?, pending: [JSONObject]) {
        extensions[client] = domain ?? ""
        apps.attached(.fileProvider)
        for signal in pending { sendEvent("fileProvider.signalEnumerator", signal, client) }
    }

    func clientClosed(_ client: UInt64) {
        registrants.remove(client)
        extensions[client] = nil
    }

    // MARK: VoIP and CallKit

    /// `callKit.reportNewIncomingCall` of call `uuid`: the VoIP pushes being handled are
    /// reported. False when that call was reported before (CallKit's `callUUIDAlreadyExists`).
    func callReported(_ uuid: String) -> Bool {
        guard reportedCalls.insert(uuid).inserted else { return false }
        for id in voipAwaiting.keys { voipAwaiting[id] = true }
        return true
    }

    /// `push.complete`: the app's PushKit completion handler of push `id` ran. A VoIP push
    /// not reported to CallKit by then gets the app terminated; true when it did.
    func completed(_ id: Int64) -> Bool {
        guard let reported = voipAwaiting.removeValue(forKey: id), !reported, apps.isInstalled(.app) else { return false }
        voipFailures += 1
        logger.warning(
            "push: the app did not report VoIP push \(id) to CallKit before its completion handler ran: terminating it (\(voipFailures) of \(voipFailureLimit))"
        )
        apps.terminate(.app, reason: "voipNotReportedToCallKit")
        return true
    }
}

import WireProtocol

/// What the parts of the session share: decoding a message's payload, the peer's name, why the
/// peer is not reachable in words; and small extensions of the payload types.
extension LinkSession {
    // MARK: - Helpers

    func decode(_ payload: MessagePayload) -> Result<MessageContent, PropertyListError> {
        switch payload {
        case .data(let bytes):
            return .success(.data(bytes))
        case .dictionary(let bytes):
            do { return .success(.dictionary(try CheckedDictionary(checking: bytes))) } catch let error as PropertyListError { return .failure(error) } catch {
                return .failure(PropertyListError(message: "\(error)"))
            }
        }
    }

    var peerName: String { role == .phone ? "watch" : "phone" }

    /// Why `isReachable` is false, in the user's words.
    public var unreachableReason: String {
        if !isLinkUp { return "the link is down" }
        if activationState == .inactive { return "this session is inactive: the phone switched to another watch" }
        if activationState != .activated { return "this session is not activated" }
        guard let peer = peerState else { return "waiting for the \(peerName)'s state" }
        if peer.activationState == .inactive, role == .watch {
            return "the phone's session is inactive: the phone switched to another watch"
        }
        if peer.activationState != .activated {
            return role == .watch
                ? "the phone's session is not activated (or the phone uses another watch)"
                : "the watch's session is not activated"
        }
        let phoneFlags = role == .phone ? flags : peer.flags
        let watchFlags = role == .watch ? flags : peer.flags
        if !phoneFlags.contains(.isPaired) { return "the devices are not paired" }
        if !phoneFlags.contains(.isWatchAppInstalled) { return "the watch app is not installed" }
        if watchFlags.contains(.isWatchOnlyApp) { return "the watch app is a watch-only app" }
        if !watchFlags.contains(.isCompanionAppInstalled) { return "the companion app is not installed" }
        switch role {
        case .phone where peer.appState != .foreground: return "the watch app is \(peer.appState.name), not in the foreground"
        case .watch where !appIsInteractive: return watchAppIdleReason
        default: return "reachable"
        }
    }
}

extension LinkSession {
    /// Watch: why the app cannot converse, in the user's words.
    var watchAppIdleReason: String {
        if appState == .foreground, let spell = weather.spell {
            let what = spell.kind == .wristDown ? "the wrist is down" : "the screen went off"
            return "\(what) (device weather, seed \(weather.model.seed)): the watch app stays frontmost but is not active"
        }
        return "the watch app is \(appState.name), not in the foreground (nor in a workout)"
    }
}

extension MessagePayload {
    var byteCount: Int { bytes.count }
}

extension ReceivedItem {
    /// About what the item holds in memory, for the received list's byte budget.
    var payloadByteCount: Int {
        switch content {
        case .data(let bytes): return bytes.count
        case .dictionary(let dictionary): return dictionary.encoded.count
        }
    }
}

extension PropertyListCodec {
    /// The binary property list of an empty dictionary: the default reply.
    static let emptyDictionary: [UInt8] = (try? PropertyListCodec.encode([:])) ?? []
}

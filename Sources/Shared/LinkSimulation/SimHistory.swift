import LinkCrypto
import LinkSession
import LinkStore
import WireProtocol

/// What each app asked for and was told (invoked, succeeded, failed, or unknown when its
/// daemon died first), and the checks over it at the end of a world.
final class SimHistory {
    enum Operation {
        case userInfo(Int, complication: Bool)
        case context(Int)
        case file(Int)
        case message(Int, wantsReply: Bool)
        case cancel(String)
        case appState
        case workout(Bool)
        case attach
        case quit
        case flags([DeviceFlagName: Bool])
        case acknowledge(UInt64)
        case receivedList
    }

    struct Invocation {
        let role: Role
        let incarnation: Int
        let operation: Operation
        /// When the app asked (virtual milliseconds).
        let at: Int64
        /// Whether an app process was attached (it makes the transfer its own).
        let byAttachedApp: Bool
        /// Why the pair was unusable from this side when the app asked, if it was.
        var pairingFailure: WCErrorCode? = nil
        var outcomes = 0
    }

    /// The limits the rules document, stated here rather than read from the session's
    /// configuration, so that a changed default is a failure: `WCSession.h` limits a userInfo
    /// (and a file's metadata) to 65,536 bytes and the application context to 262,144;
    /// `transferCurrentComplicationUserInfo` has 50 transfers a day; a reply that does not
    /// come fails with 7012 after the standard 10 s.
    static let userInfoLimit = 65_536
    static let contextLimit = 262_144
    static let complicationTransfersPerDay = 50
    static let replyTimeoutMilliseconds: Int64 = 10_000

    unowned var world: SimWorld!
    private(set) var failures: [String] = []
    private var invocations: [UInt64: Invocation] = [:]
    private var nextToken: UInt64 = 1
    private var nextItem = 1
    /// Transfer ids of accepted userInfo and file transfers, by item number.
    private var accepted: [Int: String] = [:]
    private var acceptedBy: [Int: Role] = [:]
    /// Transfer ids that finished with an error (the sender's `didFinish`), with its code.
    private var finishedWithError: [String: WCErrorCode] = [:]
    /// Transfer ids cancelled or timed out while not yet delivered.
    private var withdrawn: Set<String> = []
    private var acceptedIds: [Role: [String]] = [.phone: [], .watch: []]
    private var fileSources: [Int: [UInt8]] = [:]
    private var lastAcceptedContext: [Role: Int] = [:]
    /// How often each transfer's didFinish reached its app.
    private var finishedTold: [String: Int] = [:]
    /// Transfers whose sender was told its timeout withdrew them: their didFinish is 7017.
    private var timedOut: Set<String> = []
    /// The exact size of a payload made at a documented limit, by item number.
    private var payloadSizes: [Int: Int] = [:]
    /// Each side's state since its last restore of the store (a start, or a failed turn's
    /// reload): what it sent and accepted in that time.
    private var epoch: [Role: Int] = [.phone: 0, .watch: 0]
    /// Numbers of the userInfo and context items each side put on the link, ever.
    private var sentNumbers: [Role: Set<Int>] = [.phone: [], .watch: []]
    /// Plain userInfo accepted in the current epoch, by side, in order.
    private var plainAcceptedThisEpoch: [Role: [Int]] = [.phone: [], .watch: []]
    /// Per current complication item: the plain items of its epoch not yet sent when it was
    /// asked for, which it must go ahead of.
    private var mustGoAhead: [Int: [Int]] = [:]
    private var unsentAtSubmit: [UInt64: [Int]] = [:]
    /// Contexts accepted by each side, and those replaced before they went out (never sent).
    private var acceptedContexts: [Role: [Int]] = [.phone: [], .watch: []]
    private var replacedContexts: [Role: [Int: Int]] = [.phone: [:], .watch: [:]]
    /// Transfers an attached app process made: their didFinish must reach an app process,
    /// at the latest at the next launch.
    private var madeByApp: Set<String> = []
    /// Transfers whose didFinish reached an attached app, or was lost with a daemon that died
    /// after committing it.
    private var finishedToAnApp: Set<String> = []
    /// didFinish told at once (not from the store at a launch), per transfer.
    private var finishedToldAtOnce: [String: Int] = [:]
    /// The `seq` of finished transfers an app acknowledged, per side: never told again.
    private var acknowledgedFinished: [Role: Set<UInt64>] = [.phone: [], .watch: []]
    private var finishedSeqs: [Role: [UInt64: String]] = [.phone: [:], .watch: [:]]
    /// Each side's own device flags, as last set.
    private var flags: [Role: [DeviceFlagName: Bool]] = [
        .phone: [.isPaired: true, .isWatchAppInstalled: true], .watch: [.isCompanionAppInstalled: true, .isWatchOnlyApp: false],
    ]

    /// The flags a restarted daemon sets again (its state files keep them).
    func flagsDifferingFromTheDefault(of role: Role) -> [DeviceFlagName: Bool] {
        let usable: [DeviceFlagName: Bool] = [.isPaired: true, .isWatchAppInstalled: true, .isCompanionAppInstalled: true, .isWatchOnlyApp: false]
        return (flags[role] ?? [:]).filter { usable[$0.key] != $0.value }
    }

    /// Why this side may not send now, by its own flags (`WCSession.h`: 7005 not paired, 7006
    /// the watch app not installed, 7018 the companion app not installed, 7019 a watch-only
    /// app); nil when it may.
    private func pairingFailure(of role: Role) -> WCErrorCode? {
        let own = flags[role] ?? [:]
        switch role {
        case .phone:
            if own[.isPaired] != true { return .deviceNotPaired }
            if own[.isWatchAppInstalled] != true { return .watchAppNotInstalled }
        case .watch:
            if own[.isWatchOnlyApp] == true { return .watchOnlyApp }
            if own[.isCompanionAppInstalled] != true { return .companionAppNotInstalled }
        }
        return nil
    }

    /// Acknowledgements answered in the turn under way, per side.
    private var acknowledgementsThisTurn: [Role: [UInt64]] = [:]
    /// Received files checked when they were handed to an attached app.
    private var filesCheckedAsHanded: Set<String> = []
    /// When the receiving app quit without answering a message, by message number.
    private var quitWithoutReply: [Int: Int64] = [:]
    /// Current complication items told to the phone's app per UTC day (a lower bound of the
    /// day's budget used).
    private var complicationsToday: [Int64: Int] = [:]

    func fail(_ message: String) {
        if failures.count < 50 { failures.append(message) }
        world.trace("FAILED: " + message)
    }

    /// A token for a command of the daemon itself (activation at start), not checked.
    func internalToken() -> RequestToken {
        defer { nextToken += 1 }
        return RequestToken(nextToken)
    }

    static func payload(_ number: Int) -> [UInt8] {
        (try? PropertyListCodec.encode(["n": .integer(Int64(number))])) ?? []
    }

    /// An item's payload of exactly `size` bytes (padded with data).
    static func payload(_ number: Int, size: Int) -> [UInt8] {
        var padding = max(0, size - 64)
        for _ in 0..<4 {
            let encoded = (try? PropertyListCodec.encode(["n": .integer(Int64(number)), "p": .data([UInt8](repeating: 1, count: padding))])) ?? []
            if encoded.count == size { return encoded }
            padding = max(0, padding + size - encoded.count)
        }
        return (try? PropertyListCodec.encode(["n": .integer(Int64(number)), "p": .data([UInt8](repeating: 1, count: padding))])) ?? []
    }

    static func number(_ payload: [UInt8]) -> Int? {
        guard let dictionary = try? PropertyListCodec.decodeDictionary(payload), case .integer(let n)? = dictionary["n"] else {
            return nil
        }
        return Int(n)
    }

    // MARK: - The workload

    func submitRandomOperation() {
        let o = world.options
        let weights = [
            o.userInfoWeight, o.complicationWeight, o.contextWeight, o.fileWeight, o.messageWeight, o.cancelWeight, o.appStateWeight,
            o.limitWeight, o.appWeight, o.flagsWeight, o.burstWeight, o.switchWeight, o.reachability.weight,
        ]
        var pick = world.random.int(0...(weights.reduce(0, +) - 1))
        var kind = 0
        while pick >= weights[kind] {
            pick -= weights[kind]
            kind += 1
        }
        if kind == 11 { return world.switching.step() }
        let role: Role = kind == 1 || world.random.chance(0.5) ? .phone : .watch
        let node = world.node(role)
        guard node.isUp else { return }
        // While another watch is active the phone's app talks to it, outside this world; after
        // a switch back the app waits for its session to deactivate and activates it again.
        if role == .phone, world.switching.isAway || node.peer.session.activationState != .activated { return }
        let number = nextItem
        nextItem += 1
        let operation: Operation
        let command: SessionCommand
        switch kind {
        case 0, 1:
            operation = .userInfo(number, complication: kind == 1)
            command = kind == 1 ? .transferComplicationUserInfo(Self.payload(number)) : .transferUserInfo(Self.payload(number))
        case 2:
            operation = .context(number)
            command = .updateApplicationContext(Self.payload(number))
            world.contextUpdateSubmitted(by: role)
        case 3:
            var bytes = world.random.bytes(world.random.int(0...o.maximumFileBytes))
            if world.random.int(0...99) < o.corruptFilePercent {
                // The receiver's disk corrupts every copy of this file.
                bytes = Self.fileBytes(number, count: max(1, bytes.count))
                world.node(role == .phone ? .watch : .phone).files.corruptsEveryCopyOf.insert(SHA256Digest.hash(bytes))
            }
            submitFile(number, bytes: bytes, on: node)
            return
        case 4:
            let wantsReply = world.random.chance(0.5)
            operation = .message(number, wantsReply: wantsReply)
            let payload = Self.payload(number)
            world.limits.messageSizes[number] = payload.count
            command = .sendMessage(.dictionary(payload), wantsReply: wantsReply, timeoutMilliseconds: nil)
        case 10:
            burst(from: node)
            return
        case 7:
            // A payload of exactly a documented limit, or one byte over it.
            let isContext = world.random.chance(0.3)
            let size = (isContext ? Self.contextLimit : Self.userInfoLimit) + (world.random.chance(0.5) ? 1 : 0)
            let payload = Self.payload(number, size: size)
            payloadSizes[number] = payload.count
            if isContext {
                operation = .context(number)
                command = .updateApplicationContext(payload)
                world.contextUpdateSubmitted(by: role)
            } else {
                operation = .userInfo(number, complication: false)
                command = .transferUserInfo(payload)
            }
        case 8:
            if let watchApp = node.watchApp { return watchApp.userActs() }
            if node.app == nil {
                let handles: AppHandles = world.random.chance(0.7) ? .all : AppHandles(rawValue: UInt8(world.random.int(0...15)))
                let state: AppState = world.random.chance(0.7) ? .foreground : .background
                let token = register(.attach, on: node)
                node.attachApp(state, handles: handles, token: token)
            } else if world.random.chance(0.5) {
                node.appQuits(token: register(.quit, on: node))
            } else if let app = node.app {
                node.appAcknowledges(attachment: app.number)
            }
            return
        case 9:
            let names: [DeviceFlagName] = role == .phone ? [.isPaired, .isWatchAppInstalled] : [.isCompanionAppInstalled, .isWatchOnlyApp]
            let name = names[world.random.int(0...1)]
            let change = [name: !(flags[role]?[name] ?? false)]
            flags[role, default: [:]][name] = change[name]
            operation = .flags(change)
            command = .setDeviceFlags(change)
        case 12:
            // The installed watch app's state is its emulated OS's (SimWatchApp).
            if role == .watch, o.watchAppInstalled { return }
            let (change, workout) = world.reachability.randomCommand(on: node)
            operation = workout.map { .workout($0) } ?? .appState
            command = change
        case 5:
            guard let ids = acceptedIds[role], !ids.isEmpty else { return }
            let id = ids[world.random.int(0...(ids.count - 1))]
            operation = .cancel(id)
            command = world.random.chance(0.5) ? .cancelTransfer(transferId: id) : .timeOutTransfer(transferId: id)
        default:
            if let watchApp = node.watchApp { return watchApp.userSetsState(world.random.chance(0.5) ? .foreground : .background) }
            operation = .appState
            command = .setAppState(world.random.chance(0.5) ? .foreground : .background)
        }
        submit(command, operation, on: node)
    }

    private func submitFile(_ number: Int, bytes: [UInt8], on node: SimNode) {
        fileSources[number] = bytes
        let source = "/sources/\(number)"
        node.files.sources[source] = bytes
        submit(.file(.transfer(path: source, metadata: Self.payload(number))), .file(number), on: node)
    }

    /// A file's bytes made from its number (cheap at megabytes, unique per number).
    static func fileBytes(_ number: Int, count: Int) -> [UInt8] {
        var random = SimRandom(seed: UInt64(number))
        let block = random.bytes(4_096)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count { bytes += block.prefix(count - bytes.count) }
        return bytes
    }

    private var burstsDone = 0

    /// A burst that reaches a shipped limit (worlds on the shipped limits): thousands of
    /// userInfo or messages at once, a file over the 4 MiB window, or `received.list`.
    private func burst(from node: SimNode) {
        let linkUp = node.connection?.end(node.role).established == true
        // Each kind in turn, so that every world on the shipped limits reaches each limit; a
        // burst of items or messages waits for the link.
        // One burst a world, of the kind it drew: each costs thousands of turns or megabytes.
        let kind = world.options.shippedBurst
        if burstsDone > 0 || (kind < 2 && !linkUp) { return submit(.receivedList(after: nil), .receivedList, on: node) }
        burstsDone += 1
        switch kind {
        case 0:
            world.trace("\(node.role.name) app: a burst of \(SimLimits.itemsInFlight + 52) userInfo")
            for _ in 0..<(SimLimits.itemsInFlight + 52) {
                let n = nextItem
                nextItem += 1
                submit(.transferUserInfo(Self.payload(n)), .userInfo(n, complication: false), on: node)
            }
        case 1:
            // More messages than the list keeps, or more payload than its budget.
            let large = world.random.chance(0.5)
            let count = large ? 20 : SimLimits.receivedListCount + 10
            world.trace("\(node.role.name) app: a burst of \(count) messages")
            for _ in 0..<count {
                let n = nextItem
                nextItem += 1
                let payload = large ? Self.payload(n, size: 16_384) : Self.payload(n)
                world.limits.messageSizes[n] = payload.count
                submit(.sendMessage(.dictionary(payload), wantsReply: false, timeoutMilliseconds: nil), .message(n, wantsReply: false), on: node)
            }
        case 2:
            let n = nextItem
            nextItem += 1
            submitFile(n, bytes: Self.fileBytes(n, count: Int(SimLimits.fileBytesInFlight) + 300 << 10), on: node)
        default:
            submit(.receivedList(after: nil), .receivedList, on: node)
        }
    }

    private func register(_ operation: Operation, on node: SimNode) -> RequestToken {
        let token = internalToken()
        invocations[token.rawValue] = Invocation(
            role: node.role, incarnation: node.incarnation, operation: operation, at: world.now, byAttachedApp: node.app != nil)
        world.trace("\(node.role.name) app: \(operation)")
        return token
    }

    /// The attached app acknowledges up to `seq`: a request of its own.
    func acknowledgement(upTo seq: UInt64, by role: Role) -> RequestToken {
        register(.acknowledge(seq), on: world.node(role))
    }

    /// The attached app quits (its connection closes).
    func appQuit(_ app: SimNode.AttachedApp, by role: Role) {
        if app.handedUpTo > 0 { world.coverage.count(.appQuitWithItemsHanded) }
        for n in app.awaiting.values.sorted() {
            world.coverage.count(.appQuitAwaitingReply)
            quitWithoutReply[n] = world.now
        }
    }

    private func submit(_ command: SessionCommand, _ operation: Operation, on node: SimNode) {
        let token = internalToken()
        invocations[token.rawValue] = Invocation(
            role: node.role, incarnation: node.incarnation, operation: operation, at: world.now, byAttachedApp: node.app != nil,
            pairingFailure: pairingFailure(of: node.role))
        switch operation {
        case .userInfo(let n, _), .file(let n): operations[n] = (node.role, operation)
        default: break
        }
        switch operation {
        case .userInfo(_, complication: true):
            unsentAtSubmit[token.rawValue] = plainAcceptedThisEpoch[node.role, default: []].filter { !sentNumbers[node.role, default: []].contains($0) }
        case .context:
            unsentAtSubmit[token.rawValue] = acceptedContexts[node.role, default: []].filter { !sentNumbers[node.role, default: []].contains($0) }
        default: break
        }
        world.trace("\(node.role.name) app: \(operation)")
        world.reachability.willSubmit(token, command, on: node)
        node.command(command, token: token)
        world.reachability.didSubmit(token)
    }

    /// The phone's messages that wait for their reply (requests without an outcome yet).
    func phoneMessagesAwaitingReplies() -> Set<UInt64> {
        let phone = world.node(.phone)
        var tokens: Set<UInt64> = []
        for (token, invocation) in invocations where invocation.role == .phone && invocation.incarnation == phone.incarnation {
            if case .message(_, wantsReply: true) = invocation.operation, invocation.outcomes == 0 { tokens.insert(token) }
        }
        return tokens
    }

    /// Faults are over: both apps come to the foreground.
    func finalPhase() {
        world.switching.switchBack()
        for role in [Role.phone, .watch] {
            // The pair becomes usable (a daemon down now starts with these flags).
            let usable = flagsDifferingFromTheDefault(of: role).mapValues { !$0 }
            for (name, value) in usable { flags[role, default: [:]][name] = value }
            let node = world.node(role)
            guard node.isUp else { continue }
            if !usable.isEmpty { submit(.setDeviceFlags(usable), .flags(usable), on: node) }
            if let watchApp = node.watchApp {
                watchApp.finalPhase()
                continue
            }
            submit(.setAppState(.foreground), .appState, on: node)
            submit(.receivedList(after: nil), .receivedList, on: node)
            if world.options.appWeight > 0 { attachForTheFinalPhase(node) }
        }
    }

    func nodeStarted(_ role: Role) {
        storeRestored(role, atStart: true)
        if world.isFinalPhase, role == .phone { world.switching.switchBack() }
        if let watchApp = world.node(role).watchApp { return watchApp.ensureOpen() }
        if world.isFinalPhase, world.options.appWeight > 0 { attachForTheFinalPhase(world.node(role)) }
    }

    /// In the final phase each side runs an app process that answers and acknowledges all.
    func attachForTheFinalPhase(_ node: SimNode) {
        if let app = node.app {
            world.schedule(.appAcknowledges(node.role, app.number), at: world.now + 1)
            for replyId in app.awaiting.keys.sorted() {
                world.schedule(.appReplies(node.role, app.number, replyId), at: world.now + 1)
            }
        } else {
            node.attachApp(.foreground, handles: .all, token: register(.attach, on: node))
        }
    }

    /// The side's session was restored from its store: what may have been sent is no longer
    /// known to it.
    func storeRestored(_ role: Role, atStart: Bool = false) {
        world.limits.restored(role, atStart: atStart)
        epoch[role, default: 0] += 1
        plainAcceptedThisEpoch[role] = []
    }

    /// An ITEM left `role` (queued before its turn's end).
    func itemSent(channel: QueueChannel, payload: [UInt8], by role: Role) {
        if role == .phone { world.switching.phoneSentItem() }
        if let reason = pairingFailure(of: role), reason != .watchOnlyApp {
            fail("\(role.name) sent a \(channel) item while its queued items must wait (\(reason.rawValue))")
        }
        guard channel != .file, let n = Self.number(payload) else { return }
        sentNumbers[role, default: []].insert(n)
        if channel == .applicationContext, let newer = replacedContexts[role]?[n] {
            fail("\(role.name): context \(n) was sent though \(newer) replaced it before it went out (the latest context wins)")
        }
    }

    func nodeCrashed(_ role: Role) {}

    // MARK: - What the apps were told

    func response(_ token: RequestToken, _ result: Result<CommandResult, SessionError>, by role: Role) {
        world.mix(11, role, token.rawValue)
        guard var invocation = invocations[token.rawValue] else { return }
        if role == .phone { world.switching.responded(token, result) }
        invocation.outcomes += 1
        invocations[token.rawValue] = invocation
        if invocation.outcomes > 1 { fail("\(role.name) request \(token.rawValue) (\(invocation.operation)) was answered \(invocation.outcomes) times") }
        world.trace("\(role.name) app told: \(invocation.operation) -> \(result)")
        world.reachability.responded(token, result)
        checkLimits(invocation, result, by: role)
        checkPairing(invocation, result, by: role)
        let unsent = unsentAtSubmit.removeValue(forKey: token.rawValue) ?? []
        switch (invocation.operation, result) {
        case (.acknowledge(let seq), .success):
            // Answered before the turn's end: it counts once the turn did not roll back (the
            // answer is not one that promises durability, so a rolled-back one is a success too).
            acknowledgementsThisTurn[role, default: []].append(seq)
        case (.userInfo(let n, let complication), .success(.transfer(let id, let remaining))):
            if invocation.byAttachedApp { madeByApp.insert(id) }
            accepted[n] = id
            acceptedBy[n] = role
            acceptedIds[role, default: []].append(id)
            if complication {
                checkComplicationBudget(remaining ?? 0, n: n, unsent: unsent)
            } else {
                plainAcceptedThisEpoch[role, default: []].append(n)
            }
        case (.file(let n), .success(.transfer(let id, _))):
            if invocation.byAttachedApp { madeByApp.insert(id) }
            accepted[n] = id
            acceptedBy[n] = role
            acceptedIds[role, default: []].append(id)
        case (.context(let n), .success(.contextUpdated)):
            lastAcceptedContext[role] = max(lastAcceptedContext[role] ?? 0, n)
            acceptedContexts[role, default: []].append(n)
            for older in unsent { replacedContexts[role, default: [:]][older] = n }
        case (.cancel(let id), .success(.cancelled(true))):
            withdrawn.insert(id)
        case (.cancel(let id), .success(.timedOut(true))):
            withdrawn.insert(id)
            timedOut.insert(id)
        case (.receivedList, .success(.received(let items))):
            world.limits.checkReceivedList(items, by: role)
        case (.message(let n, wantsReply: true), .failure(.wc(.messageReplyTimedOut, _))):
            if let quit = quitWithoutReply[n], quit < invocation.at + Self.replyTimeoutMilliseconds - 1_000 {
                fail("\(role.name): message \(n) timed out (7012) though the app it reached quit at \(quit) without replying")
            }
            if world.now - invocation.at != Self.replyTimeoutMilliseconds {
                fail("\(role.name): a message's reply timed out after \(world.now - invocation.at) ms, not the standard \(Self.replyTimeoutMilliseconds)")
            }
        default:
            break
        }
    }

    /// A transfer is refused while the pair is unusable from this side, with the error that
    /// says why.
    private func checkPairing(_ invocation: Invocation, _ result: Result<CommandResult, SessionError>, by role: Role) {
        switch invocation.operation {
        case .userInfo, .context, .file: break
        default: return
        }
        guard let expected = invocation.pairingFailure else { return }
        if case .failure(.wc(let code, _)) = result, code == expected { return }
        fail("\(role.name): \(invocation.operation) while the pair is unusable (\(expected.rawValue) expected) was answered \(result)")
    }

    /// A payload over a documented limit is refused with 7009 `payloadTooLarge`, and one at
    /// the limit is not.
    private func checkLimits(_ invocation: Invocation, _ result: Result<CommandResult, SessionError>, by role: Role) {
        let n: Int, limit: Int
        switch invocation.operation {
        case .userInfo(let number, _): (n, limit) = (number, Self.userInfoLimit)
        case .context(let number): (n, limit) = (number, Self.contextLimit)
        default: return
        }
        guard let size = payloadSizes[n] else { return }
        var tooLarge = false
        if case .failure(.wc(.payloadTooLarge, _)) = result { tooLarge = true }
        if size > limit, !tooLarge, case .success = result {
            fail("\(role.name): a payload of \(size) bytes was accepted over the limit of \(limit)")
        }
        if size <= limit, tooLarge { fail("\(role.name): a payload of \(size) bytes was refused at the limit of \(limit)") }
    }

    /// `remainingComplicationTransfers` is 0 while the watch's complication is not enabled,
    /// and otherwise counts down from 50 a day; an item that used the budget goes ahead of
    /// every plain userInfo not yet sent.
    private func checkComplicationBudget(_ remaining: Int, n: Int, unsent: [Int]) {
        guard world.options.complicationEnabled else {
            if remaining != 0 { fail("phone: \(remaining) complication transfers remain though the complication is not enabled") }
            return
        }
        guard remaining > 0 else { return }
        let day = Int64(((world.wallClockBase + Double(world.now) / 1000) / 86_400).rounded(.down))
        let before = complicationsToday[day, default: 0]
        complicationsToday[day] = before + 1
        if remaining > Self.complicationTransfersPerDay - 1 - before {
            fail("phone: \(remaining) complication transfers remain after at least \(before + 1) of \(Self.complicationTransfersPerDay) today")
        }
        mustGoAhead[n] = unsent
    }

    func notification(_ notification: SessionNotification, by role: Role) {
        world.trace("\(role.name) app notified: \(notification)")
        guard let node = world.madeNode(role) else { return }
        switch notification {
        case .userInfoDidFinish(let id, _, let earlier), .file(.didFinish(let id, _, let earlier)):
            finishedTold[id, default: 0] += 1
            if node.app != nil { finishedToAnApp.insert(id) }
            if let seq = earlier?.seq {
                // Kept in the store while no app ran, told to the next app process.
                world.coverage.count(.finishedToldAtLaunch)
                finishedSeqs[role, default: [:]][seq] = id
                if !madeByApp.contains(id) { fail("\(role.name): the app was told of \(id) at launch, a transfer no app process made") }
                if acknowledgedFinished[role, default: []].contains(seq) {
                    fail("\(role.name): the app was told again of \(id) (finished \(seq)), which an app acknowledged")
                }
                handed(seq, on: node)
            } else {
                finishedToldAtOnce[id, default: 0] += 1
                if finishedToldAtOnce[id] == 2 { fail("\(role.name): didFinish of \(id) was told twice") }
            }
        case .userInfoReceived(let seq, _, _), .applicationContextReceived(let seq, _):
            handed(seq, on: node)
        case .file(.received(let file)):
            // The app's acknowledgement removes the file from the inbox: checked as handed.
            if node.app != nil, let n = Self.number(file.metadata), let source = fileSources[n] {
                if node.files.bytes(file.path) != source { fail("\(role.name): file \(n) handed to the app at \(file.path) is not whole") }
                filesCheckedAsHanded.insert(file.transferId)
            }
            handed(file.seq, on: node)
        case .didDeactivate where role == .phone:
            world.switching.deactivated()
        case .messageReceived(let item):
            world.limits.messageRecorded(item, by: role)
            guard let replyId = item.replyId, var app = node.app, case .dictionary(let content) = item.content,
                let n = Self.number(content.encoded)
            else { break }
            app.awaiting[replyId] = n
            node.app = app
            if world.isFinalPhase || world.random.chance(0.6) {
                world.schedule(.appReplies(role, app.number, replyId), at: world.now + world.random.int64(0...2_000))
            }
        default:
            break
        }
        switch notification {
        case .userInfoDidFinish(let id, let error?, _), .file(.didFinish(let id, let error?, _)):
            if case .wc(let code, _) = error { finishedWithError[id] = code }
        default:
            break
        }
    }

    /// The attached app was handed an item or a finished transfer numbered `seq`.
    private func handed(_ seq: UInt64, on node: SimNode) {
        guard var app = node.app else { return }
        app.handedUpTo = max(app.handedUpTo, seq)
        node.app = app
        // The app acknowledges soon, or (sometimes, while faults go on) not before it quits.
        if world.isFinalPhase || world.random.chance(0.8) {
            world.schedule(.appAcknowledges(node.role, app.number), at: world.now + world.random.int64(0...50))
        }
    }

    /// A turn of `role` ended; `rolledBack` when its writes failed.
    func turnEnded(_ role: Role, rolledBack: Bool) {
        guard let seqs = acknowledgementsThisTurn.removeValue(forKey: role), !rolledBack else { return }
        for seq in seqs { acknowledged(upTo: seq, by: role) }
    }

    private func acknowledged(upTo seq: UInt64, by role: Role) {
        for (finished, _) in finishedSeqs[role, default: [:]] where finished <= seq {
            acknowledgedFinished[role, default: []].insert(finished)
        }
    }

    /// The daemon died after committing a turn and before doing what waited for the commit.
    func lostAfterCommit(_ action: SessionAction, by role: Role) {
        switch action {
        case .notify(let notification):
            switch notification {
            case .userInfoDidFinish(let id, let error, let earlier), .file(.didFinish(let id, let error, let earlier)):
                // Told by a daemon that died before telling it: the app never heard it (one
                // kept in the store is told again at the next launch).
                finishedTold[id, default: 0] += 1
                guard earlier?.seq == nil else { break }
                finishedToAnApp.insert(id)
                finishedToldAtOnce[id, default: 0] += 1
                if case .wc(let code, _)? = error { finishedWithError[id] = code }
            default:
                break
            }
        case .respond(let token, let result):
            // The commit happened: the outcome is a fact, though the app never heard it.
            if let invocation = invocations[token.rawValue], invocation.byAttachedApp, case .success(.transfer(let id, _)) = result {
                madeByApp.insert(id)
            }
            if case .acknowledge(let seq)? = invocations[token.rawValue]?.operation, case .success = result {
                acknowledged(upTo: seq, by: role)
            }
            guard case .cancel(let id)? = invocations[token.rawValue]?.operation else { return }
            switch result {
            case .success(.cancelled(true)): withdrawn.insert(id)
            case .success(.timedOut(true)):
                withdrawn.insert(id)
                timedOut.insert(id)
            default: break
            }
        default: break
        }
    }

    // MARK: - Checks at the end

    func checkEnd(phone: SimNode, watch: SimNode) {
        // Cancels and timeouts withdraw their transfer: a cancel that succeeded names it.
        for (id, code) in finishedWithError where code == .transferTimedOut { withdrawn.insert(id) }
        for id in timedOut.sorted() where finishedTold[id] != nil && finishedWithError[id] != .transferTimedOut {
            fail("\(id) was timed out and its didFinish is \(finishedWithError[id].map { "\($0.rawValue)" } ?? "a success"), not 7017")
        }
        checkQueues(from: phone, to: watch)
        checkQueues(from: watch, to: phone)
        checkContext(from: phone, to: watch)
        checkContext(from: watch, to: phone)
        // Liveness: everything outstanding drained.
        for node in [phone, watch] {
            let name = node.role.name
            guard node.isUp else {
                fail("the \(name) is not running at the end")
                continue
            }
            guard node.connection?.end(node.role).established == true else {
                fail("the link is not up at the end of the final phase (\(name))")
                continue
            }
            let state = node.store.committed
            if let item = state.outbox.first(where: { $0.channel != .applicationContext }) {
                fail("the \(name) still has \(item.channel) seq \(item.seq) (\(item.transferId)) queued after the final phase")
            }
            if !state.undelivered.isEmpty { fail("the \(name) has \(state.undelivered.count) received items never handed to its app") }
            if !state.incomingFiles.isEmpty { fail("the \(name) has \(state.incomingFiles.count) incoming files unfinished after the final phase") }
            if world.options.appWeight > 0, !state.finished.isEmpty {
                fail("the \(name) keeps \(state.finished.count) finished transfers its app was never told of")
            }
        }
        for id in madeByApp.sorted() where finishedTold[id] != nil && !finishedToAnApp.contains(id) {
            fail("the didFinish of \(id), made by an app process, never reached an app process")
        }
        for (token, invocation) in invocations.sorted(by: { $0.key < $1.key }) where invocation.outcomes == 0 {
            let node = invocation.role == .phone ? phone : watch
            guard node.incarnation == invocation.incarnation else { continue }
            fail("\(invocation.role.name) request \(token) (\(invocation.operation)) never got an outcome")
        }
    }

    private func inbox(of node: SimNode) -> [InboxItem] {
        (node.store.delivered + node.store.committed.undelivered).sorted { $0.seq < $1.seq }
    }

    private func checkQueues(from sender: SimNode, to receiver: SimNode) {
        let direction = "\(sender.role.name) -> \(receiver.role.name)"
        var seen: Set<Int> = []
        var lastPlain = 0
        var lastComplication = 0
        var seenFiles: Set<String> = []
        for item in inbox(of: receiver) {
            switch item.channel {
            case .userInfo:
                guard let n = Self.number(item.payload), case .userInfo(_, let complication)? = operation(numbered: n, by: sender.role)
                else {
                    fail("\(direction): a userInfo was delivered that was never sent: \(item.payload)")
                    continue
                }
                if !seen.insert(n).inserted { fail("\(direction): userInfo \(n) was delivered twice") }
                if complication {
                    if n < lastComplication { fail("\(direction): complication userInfo \(n) was delivered after \(lastComplication)") }
                    lastComplication = max(lastComplication, n)
                } else {
                    if n < lastPlain { fail("\(direction): userInfo \(n) was delivered after \(lastPlain): out of order") }
                    lastPlain = max(lastPlain, n)
                }
                if let id = accepted[n], finishedWithError[id] == .insufficientSpace {
                    fail("\(direction): userInfo \(n) was delivered though its sender was told 7015")
                }
            case .file:
                guard let file = ReceivedFile(seq: item.seq, payload: item.payload), let n = Self.number(file.metadata),
                    let source = fileSources[n]
                else {
                    fail("\(direction): a file was delivered that was never sent")
                    continue
                }
                seen.insert(n)
                if !seenFiles.insert(file.transferId).inserted { fail("\(direction): file \(n) was delivered twice") }
                let removedByTheApp = receiver.files.bytes(file.path) == nil && filesCheckedAsHanded.contains(file.transferId)
                if receiver.isUp, !removedByTheApp, receiver.files.bytes(file.path) != source {
                    fail("\(direction): file \(n) at \(file.path) is not whole (\(receiver.files.bytes(file.path)?.count ?? -1) of \(source.count) bytes)")
                }
            case .applicationContext:
                continue
            }
        }
        // A current complication item went ahead of the plain items not yet sent when it came.
        var position: [Int: Int] = [:]
        for (index, item) in inbox(of: receiver).enumerated() where item.channel == .userInfo {
            if let n = Self.number(item.payload) { position[n] = index }
        }
        for (c, plain) in mustGoAhead.sorted(by: { $0.key < $1.key }) where operations[c]?.0 == sender.role {
            guard let cPosition = position[c] else { continue }
            for p in plain where (position[p] ?? Int.max) < cPosition {
                fail("\(direction): userInfo \(p), not yet sent when complication userInfo \(c) came, was delivered before it")
            }
        }
        for (n, id) in accepted.sorted(by: { $0.key < $1.key }) where acceptedBy[n] == sender.role && !seen.contains(n) {
            if finishedWithError[id] != nil || withdrawn.contains(id) { continue }
            fail("\(direction): transfer \(n) (\(id)) was accepted and never delivered, and its sender was told no error")
        }
    }

    private func checkContext(from sender: SimNode, to receiver: SimNode) {
        let direction = "\(sender.role.name) -> \(receiver.role.name)"
        var last = 0
        for item in inbox(of: receiver) where item.channel == .applicationContext {
            guard let n = Self.number(item.payload) else { continue }
            if n < last { fail("\(direction): context \(n) was delivered after the newer \(last)") }
            last = max(last, n)
        }
        let sent = sender.store.committed.applicationContext.flatMap(Self.number)
        if let accepted = lastAcceptedContext[sender.role], (sent ?? 0) < accepted {
            fail("\(direction): the sender's context is \(sent ?? 0), older than the accepted \(accepted)")
        }
        let received = receiver.store.committed.receivedApplicationContext.flatMap(Self.number)
        if let sent, received != sent {
            fail("\(direction): the latest context is \(sent), the receiver has \(received.map(String.init) ?? "none")")
        }
    }

    private var operations: [Int: (Role, Operation)] = [:]

    private func operation(numbered n: Int, by role: Role) -> Operation? {
        guard let (submitter, operation) = operations[n], submitter == role else { return nil }
        return operation
    }
}

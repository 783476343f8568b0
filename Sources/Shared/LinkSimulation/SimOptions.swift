/// What a seed's world is like (swarm testing: every seed draws its own mix of workload and
/// faults, so that rare combinations come up across seeds rather than never in an average one).
package struct SimOptions: CustomStringConvertible {
    /// Workload steps before the final phase.
    package var steps: Int
    /// Virtual milliseconds between workload steps, at most.
    package var stepGapMilliseconds: Int64
    /// One-way link latency, at most.
    package var latencyMilliseconds: Int64
    /// Per workload step: the chance of a fault, and the weights of each kind.
    package var faultRate: Double
    package var killWeight: Int
    package var powerCutWeight: Int
    package var cutWeight: Int
    package var partitionWeight: Int
    /// The chance of each store call failing (ENOSPC or EIO), while faults are on.
    package var storeFaultRate: Double
    /// Workload weights.
    package var userInfoWeight: Int
    package var complicationWeight: Int
    package var contextWeight: Int
    package var fileWeight: Int
    package var messageWeight: Int
    package var cancelWeight: Int
    package var appStateWeight: Int
    /// Payloads of exactly a documented limit, or one byte over.
    package var limitWeight: Int
    /// Whether the phone's app has the watch's complication enabled (the budget of
    /// `transferCurrentComplicationUserInfo` applies).
    package var complicationEnabled: Bool
    /// App processes attaching, acknowledging, answering and quitting (0: the daemon plays
    /// the app throughout).
    package var appWeight: Int
    /// Device flags changing while faults go on: the phone unpaired or without the watch app,
    /// the watch without its companion app or a watch-only app.
    package var flagsWeight: Int
    /// Session limits, small to reach edge states (not used in worlds on the shipped limits).
    package var maximumItemsInFlight: Int
    package var fileChunkLength: Int
    package var fileWindowBytes: UInt64
    package var fileCommitInterval: UInt64
    package var maximumFileBytes: Int
    /// How the receiving app answers messages that want a reply.
    package var replyMode: Int
    /// The session's shipped limits (2,048 items in flight, 256 KiB chunks, a 4 MiB file
    /// window) instead of small ones, with bursts that reach them: thousands of userInfo and
    /// messages at once, files over 4 MiB, `received.list` asked for. Such worlds keep the
    /// queue order plain (no complication items, cancels or store faults) so that what is in
    /// flight is what the limit counts.
    package var shippedLimits: Bool
    /// Which limit such a world bursts past, once: 0 the userInfo in flight, 1 the messages
    /// `received.list` keeps, 2 the file window (each costs thousands of turns or megabytes).
    package var shippedBurst: Int
    /// Files whose every copy the receiver's disk corrupts (their SHA-256 check fails), in
    /// percent of files.
    package var corruptFilePercent: Int
    /// The phone switching to other watches (paired when they first link) and back.
    package var switchWeight: Int
    /// Whether the watch app is an installed program its OS launches (SimWatchApp), and the
    /// seed of the watch launch policy's delays.
    package var watchAppInstalled: Bool
    package var launchSeed: UInt64
    /// The weather and the apps' state changes (SimReachability.swift).
    package var reachability: SimReachabilityOptions
    /// Whether each node runs the daemon's `DeliveryStore` on SQLite over an in-memory file
    /// system (``SimDisk``) instead of ``ModelStore``.
    package var onSQLite = false

    package init(drawingFrom random: inout SimRandom) {
        steps = random.int(10...60)
        stepGapMilliseconds = [0, 5, 50, 500][random.int(0...3)]
        latencyMilliseconds = [0, 2, 20, 200][random.int(0...3)]
        faultRate = [0.0, 0.05, 0.15, 0.3][random.int(0...3)]
        killWeight = random.int(0...3)
        powerCutWeight = random.int(0...3)
        cutWeight = random.int(0...3)
        partitionWeight = random.int(0...2)
        storeFaultRate = [0.0, 0.0, 0.01, 0.05][random.int(0...3)]
        userInfoWeight = random.int(1...6)
        complicationWeight = random.int(0...2)
        contextWeight = random.int(0...4)
        fileWeight = random.int(0...2)
        messageWeight = random.int(0...4)
        cancelWeight = random.int(0...1)
        appStateWeight = random.int(0...1)
        maximumItemsInFlight = random.int(1...8)
        fileChunkLength = random.int(64...2048)
        fileWindowBytes = UInt64(random.int(1...4)) * UInt64(fileChunkLength)
        fileCommitInterval = UInt64(random.int(1...8)) * UInt64(fileChunkLength)
        maximumFileBytes = [0, 300, 5000][random.int(0...2)]
        replyMode = random.int(0...2)
        limitWeight = random.chance(0.3) ? 1 : 0
        complicationEnabled = random.chance(0.5)
        appWeight = random.chance(0.5) ? random.int(1...3) : 0
        flagsWeight = random.chance(0.3) ? 1 : 0
        corruptFilePercent = random.chance(0.3) ? 25 : 0
        shippedLimits = random.chance(1.0 / 128)
        shippedBurst = random.int(0...2)
        switchWeight = random.chance(0.3) && !shippedLimits ? 1 : 0
        watchAppInstalled = random.chance(0.25)
        launchSeed = random.next()
        // The background life's rules play out over minutes to hours of virtual time.
        if watchAppInstalled, random.chance(0.6) { stepGapMilliseconds = [20_000, 120_000, 300_000][random.int(0...2)] }
        reachability = SimReachabilityOptions(drawingFrom: &random)
        if reachability.weatherSeed != nil {
            stepGapMilliseconds = reachability.stepGapMilliseconds
            // A deactivation tells the app at once, where the weather's checks expect every
            // report late: switching runs under the calm weather.
            switchWeight = 0
        }
        if shippedLimits {
            stepGapMilliseconds = 500
            latencyMilliseconds = min(latencyMilliseconds, 20)
            storeFaultRate = 0
            complicationWeight = 0
            cancelWeight = 0
            appStateWeight = 0
            flagsWeight = 0
            appWeight = 0
            limitWeight = 0
            watchAppInstalled = false
            // Calm, with both apps in the foreground: bursts of messages need the peer reachable.
            reachability.weatherSeed = nil
            reachability.weight = 0
        }
    }

    /// Weight of a burst in the workload (worlds on the shipped limits).
    var burstWeight: Int { shippedLimits ? 3 : 0 }

    /// One world in 24 runs on SQLite, always with power cuts among its faults and without
    /// the store faults (which ``ModelStore`` makes).
    package mutating func drawStore(from random: inout SimRandom) {
        guard random.int(0...23) == 0, !shippedLimits else { return }
        onSQLite = true
        faultRate = max(faultRate, 0.05)
        powerCutWeight = max(powerCutWeight, 1)
        storeFaultRate = 0
    }

    package var description: String {
        "steps \(steps), gap \(stepGapMilliseconds) ms, latency \(latencyMilliseconds) ms, faults \(faultRate) "
            + "(kill \(killWeight), power cut \(powerCutWeight), cut \(cutWeight), partition \(partitionWeight)), "
            + "store faults \(storeFaultRate), weights userInfo \(userInfoWeight) complication \(complicationWeight) "
            + "context \(contextWeight) file \(fileWeight) message \(messageWeight) cancel \(cancelWeight) "
            + "appState \(appStateWeight), "
            + (shippedLimits
                ? "the shipped limits, "
                : "in flight \(maximumItemsInFlight), chunk \(fileChunkLength), window \(fileWindowBytes), commit interval \(fileCommitInterval), ")
            + "files up to \(maximumFileBytes) bytes, "
            + "reply mode \(replyMode), limits \(limitWeight), complication \(complicationEnabled ? "enabled" : "disabled"), apps \(appWeight), flags \(flagsWeight), \(reachability)"
            + ", corrupt files \(corruptFilePercent)%, switches \(switchWeight)\(shippedLimits ? ", shipped limits with burst \(shippedBurst)" : "")"
            + (watchAppInstalled ? ", watch app installed (launch seed \(launchSeed))" : "")
            + (onSQLite ? ", on SQLite" : "")
    }
}

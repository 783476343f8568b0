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
    /// Session limits, small to reach edge states.
    package var maximumItemsInFlight: Int
    package var fileChunkLength: Int
    package var fileWindowBytes: UInt64
    package var fileCommitInterval: UInt64
    package var maximumFileBytes: Int
    /// How the receiving app answers messages that want a reply.
    package var replyMode: Int
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
    }

    /// One world in 24 runs on SQLite, always with power cuts among its faults and without
    /// the store faults (which ``ModelStore`` makes).
    package mutating func drawStore(from random: inout SimRandom) {
        guard random.int(0...23) == 0 else { return }
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
            + "appState \(appStateWeight), in flight \(maximumItemsInFlight), chunk \(fileChunkLength), "
            + "window \(fileWindowBytes), commit interval \(fileCommitInterval), files up to \(maximumFileBytes) bytes, "
            + "reply mode \(replyMode), limits \(limitWeight), complication \(complicationEnabled ? "enabled" : "disabled"), apps \(appWeight), flags \(flagsWeight)"
            + (onSQLite ? ", on SQLite" : "")
    }
}

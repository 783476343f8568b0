/// What caused an entry: the entry running now (an op, a frame received, a timer), kept for
/// later when the work it caused waits (a commit, a copy), and the control op that is written
/// only once it causes something (`status` and other ops that change nothing leave no entry).
extension Tracer {
    /// An op whose entry is written only when something it caused is.
    final class PendingOp {
        let name: String
        let client: UInt64
        let time: Int64
        fileprivate(set) var number: UInt64?

        init(name: String, client: UInt64, time: Int64) {
            self.name = name
            self.client = client
            self.time = time
        }
    }

    /// A cause kept for later (an action that waits for the commit, a copy that runs for a
    /// while): an entry, or an op whose entry is not written unless something it caused is.
    enum Cause {
        case entry(UInt64)
        case op(PendingOp)
    }

    /// The cause now, without writing the running op's entry.
    var pendingCause: Cause? {
        if let currentCause { return .entry(currentCause) }
        return runningOp.map { .op($0) }
    }

    /// Runs `body` with a cause kept earlier (nil keeps the current one).
    func withCause<T>(_ cause: Cause?, _ body: () throws -> T) rethrows -> T {
        guard let cause else { return try body() }
        let saved = (currentCause, runningOp)
        switch cause {
        case .entry(let number): (currentCause, runningOp) = (number, nil)
        case .op(let op): (currentCause, runningOp) = (nil, op)
        }
        defer { (currentCause, runningOp) = saved }
        return try body()
    }

    /// The cause of what is recorded now; the running op's entry is written when it is asked for.
    var cause: UInt64? {
        if let currentCause { return currentCause }
        guard let runningOp else { return nil }
        return number(of: runningOp)
    }

    /// Runs `body` with `cause` as the cause of what it records (nil keeps the current one).
    func withCause<T>(_ cause: UInt64?, _ body: () throws -> T) rethrows -> T {
        try withCause(cause.map(Cause.entry), body)
    }

    /// Runs `body` for the control op `name` of client `client`: the op's entry is written
    /// (with the time it arrived) only if something it causes is, now or later (`number(of:)`).
    func withOp<T>(_ name: String, client: UInt64, _ body: (PendingOp?) throws -> T) rethrows -> T {
        guard isOn else { return try body(nil) }
        clockIsStale = true
        let op = PendingOp(name: name, client: client, time: time())
        let saved = (currentCause, runningOp)
        currentCause = nil
        runningOp = op
        defer { (currentCause, runningOp) = saved }
        return try body(op)
    }

    /// The entry number of `op`, writing its entry now if it has none yet.
    func number(of op: PendingOp) -> UInt64? {
        if let number = op.number { return number }
        guard isOn else { return nil }
        let saved = (currentCause, runningOp)
        currentCause = nil
        runningOp = nil
        defer { (currentCause, runningOp) = saved }
        var slot = Slot(kind: .op)
        slot.set(number: op.client)
        let number: UInt64
        if let index = opNameIndex(op.name) {
            slot.wide = UInt64(index)
            slot.bits.insert(.hasOpName)
            number = append(&slot, time: op.time)
        } else {
            number = append(slot, Detail(fields: ["op": .string(op.name)]), time: op.time)
        }
        op.number = number
        return number
    }

    /// The index of `name` in ``opNames``, added if new; nil for a name too long and once the
    /// table is full.
    private func opNameIndex(_ name: String) -> Int? {
        if let index = opNameIndices[name] { return index }
        guard opNames.count < Self.opNameLimit, name.utf8.count <= Self.opNameMaxBytes else { return nil }
        opNames.append(name)
        opNameIndices[name] = opNames.count - 1
        return opNames.count - 1
    }
}

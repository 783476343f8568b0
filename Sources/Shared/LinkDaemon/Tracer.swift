import LinkJSON
import LinkRuntime
import LinkSystem
import LinkTrace
import WireProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's trace: every frame on the link, every change of the session's state, every
/// fault, the ops that caused them, start and stop (docs/trace.md).
///
/// Recording is cheap: an entry is a ``Slot`` of plain values written over the oldest (no
/// reference counts, nothing to free), a small dictionary payload's bytes (at most
/// ``previewBytes``) and a note's transfer id are copied into a ring of bytes, an op's name is
/// an index into the names seen, and only the rare kinds keep a ``Detail`` beside it; the JSON entry is built
/// only when someone reads it (`trace.get`), follows it (`trace.entry`) or when it goes to
/// the trace file, which is written once a loop turn. Secrets never enter a record: op
/// arguments and results are not recorded, AUTH frames show their size only, and payload
/// previews show Data values (where PowerAuth packets and their token secrets travel) by their
/// size only.
final class Tracer {
    /// Payloads up to this size are kept whole for a preview; longer ones by their size only.
    static let previewBytes = 256

    /// One entry as the ring keeps it: plain values only, 48 bytes (the default ring of them
    /// is about a core's L2 cache; the entry's number is its place in the ring).
    struct Slot {
        var time: Int64 = 0
        /// A frame's id or seq, a note's seq, an op's client.
        var number: UInt64 = 0
        /// Where the entry's text (a payload's preview bytes, a note's transfer id) starts in
        /// ``texts``; a file chunk's offset; the offset a chunk acknowledgement received; an
        /// op's name in ``opNames``.
        var wide: UInt64 = 0
        /// How many entries before this one its cause is; 0 for none (a cause further back
        /// than this counts is kept in the entry's ``Detail``).
        var causeDistance: UInt32 = 0
        /// The frame's length on the wire.
        var size: UInt32 = 0
        var payloadLength: UInt32 = 0
        var textLength: UInt16 = 0
        /// The peer's index in ``peers`` plus one; 0 for none.
        var peer: UInt16 = 0
        var kind: TraceEntry.Kind
        var frameType: FrameType?
        var channel: UInt8 = 0
        var flags: UInt8 = 0
        var bits: Bits = []
        var note: Note?

        init(kind: TraceEntry.Kind) {
            self.kind = kind
        }
    }

    /// The notes recorded without a ``Detail``: what the app is told of the frequent queued
    /// transfers. (A message has no note: the MESSAGE received is its delivery.)
    enum Note: String {
        case userInfoReceived = "userInfo.received"
        case complicationUserInfoReceived = "complicationUserInfo.received"
        case userInfoDidFinish = "userInfo.didFinish"
        case contextReceived = "context.received"
    }

    struct Bits: OptionSet {
        let rawValue: UInt8
        static let outgoing = Bits(rawValue: 1 << 0)
        static let wantsReply = Bits(rawValue: 1 << 1)
        static let isData = Bits(rawValue: 1 << 2)
        static let hasNumber = Bits(rawValue: 1 << 3)
        static let hasText = Bits(rawValue: 1 << 4)
        static let hasDetail = Bits(rawValue: 1 << 5)
        /// An op's name is ``Tracer/opNames``[``wide``].
        static let hasOpName = Bits(rawValue: 1 << 6)
    }

    /// What the rare kinds keep beside their slot: the members of an op, a state change, a
    /// fault, or of a frame of a rare type (handshake, state, errors, GOAWAY), made when it is
    /// recorded. No payload is kept by reference anywhere in the ring.
    struct Detail {
        var fields: JSONObject
    }

    let capacity: Int
    private let filePath: String?
    private var fileDescriptor: Int32 = -1
    private var fileBuffer: [UInt8] = []
    /// The entries: ``capacity`` slots allocated at the first entry (their pages cost memory
    /// only once written to), the first ``ringCount`` written; once full, the oldest is at
    /// ``ringStart`` and the next entry goes over it. Raw storage rather than an array: a slot
    /// holds plain values only, and each entry was paying the array's checks of its bounds
    /// and of its uniqueness.
    private var ring: UnsafeMutablePointer<Slot>?
    private var ringCount = 0
    /// The details of the entries in the ring that have one, oldest first: entry numbers
    /// only grow, so a new one is appended and the one the ring drops is the first.
    private var details: [(number: UInt64, detail: Detail?)] = []
    private var detailsStart = 0
    /// The bytes of previews and transfer ids, one after another, the oldest overwritten once
    /// it holds ``textsCapacity``; a slot's text is there while fewer bytes have been written
    /// after it. Allocated at the first text and written in place (its pages cost memory only
    /// once written to).
    private var texts: UnsafeMutableBufferPointer<UInt8>?
    private var textsWritten: UInt64 = 0
    private let textsCapacity: Int
    /// The peers' device ids, by the index slots keep.
    private var peers: [String] = []
    private var lastPeer = 0
    /// The names of the ops recorded, by the index an op's slot keeps in ``Slot/wide``: an op's
    /// entry needs no ``Detail``. At most ``opNameLimit`` names of at most ``opNameMaxBytes``
    /// (a client may send any name; an op's entry keeps any other name in a detail, which
    /// leaves with the entry).
    private var opNames: [String] = []
    private var lastOpName = 0
    static let opNameLimit = 1_024
    static let opNameMaxBytes = 64
    private var ringStart = 0
    private(set) var lastNumber: UInt64 = 0
    var side = ""
    var device = ""
    private let pid = Int64(getpid())
    /// The time entries take, in microseconds of the real-time clock. Reading the clock costs
    /// as much as the rest of an entry, so it is read once for a batch: at the first entry
    /// after the link brought bytes (``bytesArrived()``), after a loop turn (``flush()``), and
    /// for every entry of a rare kind; the entries after it take the same time. That keeps
    /// the order both daemons share: a frame received takes a time read after its bytes were
    /// read, so after they were written; a frame sent takes one read before it is written.
    private var clock: Int64 = 0
    private var clockIsStale = true
    /// The entry that caused what happens now: an op, a frame received, a timer.
    private var currentCause: UInt64?
    /// The op running now, recorded only once it causes something (`status` and other ops
    /// that change nothing leave no entry).
    private var runningOp: PendingOp?

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
    /// Live followers (`trace.get {"follow": true}`): called for every entry.
    var follow: ((TraceEntry) -> Void)?
    var logger: Logger?

    /// - Parameter textBytes: the size of the ring of preview bytes (by default 64 bytes an
    ///   entry, at most 8 MiB).
    init(capacity: Int, filePath: String?, textBytes: Int? = nil) {
        self.capacity = capacity
        self.filePath = filePath
        textsCapacity = textBytes ?? min(max(capacity, 1_000) * 64, 8 << 20)
        // The ring is written over and freed without deinitialising its slots.
        assert(_isPOD(Slot.self), "a trace slot holds plain values only")
    }

    deinit {
        texts?.deallocate()
        ring?.deallocate()
    }

    /// Whether anything records: the ring, the file or a follower.
    var isOn: Bool { capacity > 0 || fileDescriptor >= 0 || follow != nil }

    /// Opens the trace file (appending); throws a message naming it.
    func open() throws {
        guard let filePath else { return }
        do {
            fileDescriptor = try Syscall.open(filePath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        } catch {
            throw StartupError("cannot open the trace file \(filePath): \(error)")
        }
    }

    // MARK: Recording

    /// Records a frame sent (`outgoing`) or received on the link with the peer `peerIndex`
    /// names (``peerIndex(_:)``, which a channel asks once).
    @discardableResult
    func frame(_ frame: Frame, outgoing: Bool, peerIndex: UInt16) -> UInt64? {
        guard isOn else { return nil }
        var slot = Slot(kind: .frame)
        slot.frameType = frame.type
        if outgoing { slot.bits.insert(.outgoing) }
        slot.peer = peerIndex
        slot.size = UInt32(clamping: FrameEncoder.encodedLength(of: frame))
        var detail: Detail?
        switch frame {
        case .message(let id, let wantsReply, let payload):
            slot.set(number: id)
            if wantsReply { slot.bits.insert(.wantsReply) }
            keep(payload.bytes, isData: payload.isData, in: &slot)
        case .reply(let id, let payload):
            slot.set(number: id)
            keep(payload.bytes, isData: payload.isData, in: &slot)
        case .messageAck(let id), .ping(let id), .pong(let id):
            slot.set(number: id)
        case .item(let channel, let seq, let flags, let payload):
            slot.channel = channel
            slot.set(number: seq)
            slot.flags = flags
            keep(payload, isData: channel == 3, in: &slot)
        case .ack(let channel, let seq):
            slot.channel = channel
            slot.set(number: seq)
        case .fileChunk(let seq, let offset, let data):
            slot.channel = 3
            slot.set(number: seq)
            slot.wide = offset
            slot.payloadLength = UInt32(clamping: data.count)
        case .fileChunkAck(let seq, _, let received, let committed):
            slot.channel = 3
            slot.set(number: seq)
            slot.wide = received
            detail = Detail(fields: ["committedOffset": .int(Int64(clamping: committed))])
        case .fileCancel(let seq):
            slot.channel = 3
            slot.set(number: seq)
        case .auth, .ready:
            break
        case .hello, .state, .messageError, .goAway, .itemError:
            detail = Detail(fields: Self.rareFields(frame))
        }
        if let detail { return append(slot, detail) }
        return append(&slot)
    }

    /// A payload's length, and the bytes of a dictionary of at most ``previewBytes`` for its
    /// preview (Data is shown by its size only: PowerAuth packets and their secrets travel as
    /// Data).
    private func keep(_ payload: [UInt8], isData: Bool, in slot: inout Slot) {
        slot.payloadLength = UInt32(clamping: payload.count)
        if isData {
            slot.bits.insert(.isData)
        } else if payload.count <= Self.previewBytes {
            payload.withUnsafeBufferPointer { writeText($0, into: &slot) }
        }
    }

    /// Records a note (`message.received`, `userInfo.received`, a `didFinish` without error, ...).
    @discardableResult
    func note(_ name: Note, seq: UInt64? = nil, transferId: String? = nil, peer: String?) -> UInt64? {
        guard isOn else { return nil }
        var slot = Slot(kind: .note)
        slot.note = name
        if let seq { slot.set(number: seq) }
        slot.peer = peerIndex(peer)
        if var transferId { transferId.withUTF8 { writeText($0, into: &slot) } }
        return append(&slot)
    }

    /// Records an entry of another kind with its members.
    @discardableResult
    func record(_ kind: TraceEntry.Kind, _ fields: @autoclosure () -> JSONObject) -> UInt64? {
        guard isOn else { return nil }
        clockIsStale = true
        return append(Slot(kind: kind), Detail(fields: fields()))
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
        if lastOpName < opNames.count, opNames[lastOpName] == name { return lastOpName }
        if let index = opNames.firstIndex(of: name) {
            lastOpName = index
            return index
        }
        guard opNames.count < Self.opNameLimit, name.utf8.count <= Self.opNameMaxBytes else { return nil }
        opNames.append(name)
        lastOpName = opNames.count - 1
        return lastOpName
    }

    /// The link brought bytes: the frames in them take a time read after this.
    func bytesArrived() {
        clockIsStale = true
    }

    /// The time of an entry recorded now (``clock``); never earlier than the one before.
    private func time() -> Int64 {
        if clockIsStale {
            let now = Syscall.realtime()
            clock = max(clock, Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000)
            clockIsStale = false
        }
        return clock
    }

    /// Appends an entry of a frequent kind: a frame, note or op without a ``Detail``.
    /// (Inlined into each recorder: the slot is filled in where it was made and copied once,
    /// into the ring.)
    @inline(__always)
    private func append(_ slot: inout Slot, time: Int64? = nil) -> UInt64 {
        // First: asking for the cause may write the running op's entry.
        let cause = self.cause
        if let cause, lastNumber + 1 - cause > UInt64(UInt32.max) { return append(slot, Detail(fields: [:]), time: time) }
        lastNumber += 1
        if let cause { slot.causeDistance = UInt32(lastNumber - cause) }
        slot.time = time ?? self.time()
        if fileDescriptor >= 0 || follow != nil { pass(slot, number: lastNumber, nil) }
        if capacity > 0 { store(slot) }
        return lastNumber
    }

    /// Appends an entry with its ``Detail`` (a rare kind, or a cause too far back for its slot).
    private func append(_ new: Slot, _ newDetail: Detail, time: Int64? = nil) -> UInt64 {
        var slot = new
        var detail = newDetail
        let cause = self.cause
        lastNumber += 1
        let number = lastNumber
        if let cause {
            if number - cause <= UInt64(UInt32.max) {
                slot.causeDistance = UInt32(number - cause)
            } else {
                detail.fields["cause"] = .int(Int64(clamping: cause))
            }
        }
        slot.time = time ?? self.time()
        slot.bits.insert(.hasDetail)
        if fileDescriptor >= 0 || follow != nil { pass(slot, number: number, detail) }
        if capacity > 0 {
            store(slot)
            details.append((number, detail))
        }
        return number
    }

    /// Puts the newest entry (``lastNumber``) in the ring, over the oldest once it is full.
    @inline(__always)
    private func store(_ slot: Slot) {
        let ring = self.ring ?? allocateRing()
        if ringCount < capacity {
            (ring + ringCount).initialize(to: slot)
            ringCount += 1
        } else {
            // Whether the entry written over has a detail is asked of the details (the oldest
            // kept is the first), not of its slot: the slot was written a whole ring ago, and
            // reading it back waited on memory at every entry.
            let dropped = lastNumber - UInt64(capacity)
            if detailsStart < details.count, details[detailsStart].number == dropped { dropOldestDetail() }
            (ring + ringStart).pointee = slot
            ringStart = ringStart + 1 == capacity ? 0 : ringStart + 1
        }
    }

    private func allocateRing() -> UnsafeMutablePointer<Slot> {
        let ring = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
        self.ring = ring
        return ring
    }

    /// Forgets the detail of the entry the ring drops (the oldest with one).
    private func dropOldestDetail() {
        details[detailsStart].detail = nil
        detailsStart += 1
        if detailsStart > 64 && detailsStart * 2 > details.count {
            details.removeFirst(detailsStart)
            detailsStart = 0
        }
    }

    /// The detail of entry `number` (one the ring holds), by binary search.
    private func detail(of number: UInt64) -> Detail? {
        var low = detailsStart, high = details.count
        while low < high {
            let middle = (low + high) / 2
            if details[middle].number < number { low = middle + 1 } else { high = middle }
        }
        return low < details.count && details[low].number == number ? details[low].detail : nil
    }

    /// An entry for the trace file and the followers, as JSON.
    @inline(never)
    private func pass(_ slot: Slot, number: UInt64, _ detail: Detail?) {
        let entry = self.entry(slot, number: number, detail)
        if fileDescriptor >= 0 { fileBuffer.append(contentsOf: TraceFile.line(entry)) }
        follow?(entry)
    }

    /// The index a slot keeps for `peer` (its device id); 0 for none.
    func peerIndex(_ peer: String?) -> UInt16 {
        guard let peer else { return 0 }
        if lastPeer < peers.count, peers[lastPeer] == peer { return UInt16(lastPeer + 1) }
        if let index = peers.firstIndex(of: peer) {
            lastPeer = index
        } else {
            peers.append(peer)
            lastPeer = peers.count - 1
        }
        return UInt16(truncatingIfNeeded: lastPeer + 1)
    }

    /// Copies `bytes` into ``texts`` for `slot`.
    private func writeText(_ bytes: UnsafeBufferPointer<UInt8>, into slot: inout Slot) {
        guard let source = bytes.baseAddress, bytes.count <= min(textsCapacity, Int(UInt16.max)) else { return }
        let texts = self.texts ?? .allocate(capacity: textsCapacity)
        self.texts = texts
        slot.wide = textsWritten
        slot.textLength = UInt16(bytes.count)
        slot.bits.insert(.hasText)
        let at = Int(textsWritten % UInt64(textsCapacity))
        let first = min(bytes.count, textsCapacity - at)
        (texts.baseAddress! + at).update(from: source, count: first)
        if first < bytes.count { texts.baseAddress!.update(from: source + first, count: bytes.count - first) }
        textsWritten += UInt64(bytes.count)
    }

    /// A slot's text, if it has not been overwritten since.
    private func text(of slot: Slot) -> [UInt8]? {
        guard slot.bits.contains(.hasText), let texts, textsWritten - slot.wide <= UInt64(textsCapacity) else { return nil }
        let start = Int(slot.wide % UInt64(textsCapacity))
        return (0..<Int(slot.textLength)).map { texts[(start + $0) % textsCapacity] }
    }

    /// Writes what this turn recorded to the trace file.
    func flush() {
        clockIsStale = true
        guard fileDescriptor >= 0, !fileBuffer.isEmpty else { return }
        let result = fileBuffer.withUnsafeBytes { SystemCalls.writeAll(fileDescriptor, $0) }
        if case .failure(let error) = result {
            logger?.warning("trace: cannot write the trace file \(filePath ?? ""): \(error); it is closed")
            _ = SystemCalls.close(fileDescriptor)
            fileDescriptor = -1
        }
        fileBuffer.removeAll(keepingCapacity: fileBuffer.capacity <= 1 << 20)
    }

    func close() {
        flush()
        if fileDescriptor >= 0 { _ = SystemCalls.close(fileDescriptor) }
        fileDescriptor = -1
    }

    // MARK: Reading

    /// The entries numbered after `after`, oldest first, at most `limit`.
    func entries(after: UInt64, limit: Int) -> [TraceEntry] {
        guard let oldest = oldestNumber, let ring else { return [] }
        let skip = after >= oldest ? Int(after - oldest + 1) : 0
        guard skip < ringCount else { return [] }
        let count = min(limit, ringCount - skip)
        return (0..<count).map { index in
            let slot = ring[(ringStart + skip + index) % ringCount]
            let number = oldest + UInt64(skip + index)
            return entry(slot, number: number, slot.bits.contains(.hasDetail) ? detail(of: number) : nil)
        }
    }

    /// The number of the oldest entry the ring still has (the ring holds the newest entries,
    /// one after another).
    var oldestNumber: UInt64? { ringCount == 0 ? nil : lastNumber - UInt64(ringCount) + 1 }

    /// How many details the trace holds: at most one for each entry in the ring.
    var detailCount: Int { details.count - detailsStart }

    private func entry(_ slot: Slot, number: UInt64, _ detail: Detail?) -> TraceEntry {
        var object: JSONObject = ["n": .int(Int64(number)), "t": .int(slot.time), "side": .string(side),
                                  "device": .string(device), "pid": .int(pid), "kind": .string(slot.kind.rawValue)]
        if slot.kind == .frame {
            describe(slot, into: &object)
        } else if let name = slot.note {
            object["name"] = .string(name.rawValue)
            if slot.bits.contains(.hasNumber) { object["seq"] = .int(Int64(clamping: slot.number)) }
            if let text = text(of: slot) { object["transferId"] = .string(String(decoding: text, as: UTF8.self)) }
            if let peer = peer(of: slot) { object["peer"] = .string(peer) }
        } else if slot.kind == .op {
            if slot.bits.contains(.hasOpName) { object["op"] = .string(opNames[Int(slot.wide)]) }
            object["client"] = .int(Int64(clamping: slot.number))
        }
        if let fields = detail?.fields {
            for (key, value) in fields { object[key] = value }
        }
        if slot.causeDistance != 0 { object["cause"] = .int(Int64(number - UInt64(slot.causeDistance))) }
        return TraceEntry(object)
    }

    private func peer(of slot: Slot) -> String? {
        slot.peer == 0 ? nil : peers[Int(slot.peer) - 1]
    }

    private func describe(_ slot: Slot, into object: inout JSONObject) {
        object["dir"] = .string(slot.bits.contains(.outgoing) ? "out" : "in")
        if let peer = peer(of: slot) { object["peer"] = .string(peer) }
        object["type"] = .string(slot.frameType?.name ?? "?")
        object["size"] = .int(Int64(slot.size))
        func number(_ key: String, _ value: UInt64) { object[key] = .int(Int64(clamping: value)) }
        switch slot.frameType {
        case .message?:
            number("id", slot.number)
            object["wantsReply"] = .bool(slot.bits.contains(.wantsReply))
            object["preview"] = .string(preview(slot))
        case .reply?:
            number("id", slot.number)
            object["preview"] = .string(preview(slot))
        case .messageAck?, .ping?, .pong?:
            number("id", slot.number)
        case .item?:
            number("channel", UInt64(slot.channel))
            number("seq", slot.number)
            if slot.flags != 0 { object["flags"] = .int(Int64(slot.flags)) }
            object["preview"] = .string(slot.channel == 3 ? "file header" : preview(slot))
        case .ack?:
            number("channel", UInt64(slot.channel))
            number("seq", slot.number)
        case .fileChunk?:
            number("channel", 3)
            number("seq", slot.number)
            number("offset", slot.wide)
        case .fileChunkAck?:
            number("channel", 3)
            number("seq", slot.number)
            number("receivedOffset", slot.wide)
        case .fileCancel?:
            number("channel", 3)
            number("seq", slot.number)
        default:
            break
        }
    }

    /// Data by its length; a small dictionary by its keys and short values while its bytes are
    /// kept; a larger one (or one whose bytes were overwritten) as `{…}`.
    private func preview(_ slot: Slot) -> String {
        if slot.bits.contains(.isData) { return "<\(slot.payloadLength) bytes>" }
        if let bytes = text(of: slot) { return TracePreview.text(bytes, isData: false) }
        return "{…}"
    }

    /// What the entry of a frame of a rare type says besides its type and size.
    private static func rareFields(_ frame: Frame) -> JSONObject {
        var object: JSONObject = [:]
        func number(_ key: String, _ value: UInt64) { object[key] = .int(Int64(clamping: value)) }
        switch frame {
        case .hello(let hello):
            object["preview"] = .string("\(hello.role.name) '\(hello.deviceId)' v\(hello.minVersion)-\(hello.maxVersion)")
        case .state(let state):
            object["preview"] = .string("\(state.activationState.name), app \(state.appState.name), flags 0x\(String(state.flags.rawValue, radix: 16))")
        case .messageError(let id, let code, let description):
            number("id", id)
            object["code"] = .int(Int64(code))
            object["preview"] = .string(TracePreview.clip(description))
        case .goAway(let code, let reason):
            object["code"] = .int(Int64(code))
            object["preview"] = .string((GoAwayCode(rawValue: code).map { "\($0)" } ?? "code \(code)") + ": " + TracePreview.clip(reason))
        case .itemError(let channel, let seq, let code, let description):
            number("channel", UInt64(channel))
            number("seq", seq)
            object["code"] = .int(Int64(code))
            object["preview"] = .string(TracePreview.clip(description))
        default:
            break
        }
        return object
    }
}

extension Tracer.Slot {
    mutating func set(number value: UInt64) {
        number = value
        bits.insert(.hasNumber)
    }
}

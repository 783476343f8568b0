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

    let capacity: Int
    private let filePath: String?
    private var fileDescriptor: Int32 = -1
    private var fileBuffer: [UInt8] = []
    /// The newest entries, their details and texts.
    private(set) var ring: TraceRing
    /// The peers' device ids, by the index slots keep.
    private(set) var peers: [String] = []
    private var peerIndices: [String: Int] = [:]
    /// The names of the ops recorded, by the index an op's slot keeps in ``Slot/wide``: an op's
    /// entry needs no ``Detail``. At most ``opNameLimit`` names of at most ``opNameMaxBytes``
    /// (a client may send any name; an op's entry keeps any other name in a detail, which
    /// leaves with the entry).
    var opNames: [String] = []
    var opNameIndices: [String: Int] = [:]
    static let opNameLimit = 1_024
    static let opNameMaxBytes = 64
    private(set) var lastNumber: UInt64 = 0
    var side = ""
    var device = ""
    let pid = Int64(getpid())
    /// The loop whose device clock the entries' times come from (its wall clock: the system's
    /// real-time clock, or a manual clock); the real-time clock while there is none. Read
    /// without a reference taken: the loop has a weak reference somewhere (a feature's timers),
    /// so each retain and release of it takes the slow path, about 60 instructions a read.
    var loop: EventLoop? {
        get { clockLoop?.takeUnretainedValue() }
        set {
            clockLoop = newValue.map { Unmanaged.passUnretained($0) }
            clockMoved()
        }
    }
    private var clockLoop: Unmanaged<EventLoop>?
    /// The loop while its clock is manual: under the system clock the time is read as it
    /// always was, with one system call.
    private var manualClockLoop: Unmanaged<EventLoop>?
    /// The time entries take, in microseconds of the device's wall clock. Reading the clock costs
    /// as much as the rest of an entry, so it is read once for a batch: at the first entry
    /// after the link brought bytes (``bytesArrived()``), after a loop turn (``flush()``), and
    /// for every entry of a rare kind; the entries after it take the same time. That keeps
    /// the order both daemons share: a frame received takes a time read after its bytes were
    /// read, so after they were written; a frame sent takes one read before it is written.
    private var clock: Int64 = 0
    var clockIsStale = true
    /// The entry that caused what happens now: an op, a frame received, a timer.
    var currentCause: UInt64?
    /// The op running now, recorded only once it causes something (`status` and other ops
    /// that change nothing leave no entry).
    var runningOp: PendingOp?

    /// Live followers (`trace.get {"follow": true}`): called for every entry.
    var follow: ((TraceEntry) -> Void)?
    var logger: Logger?

    /// - Parameter textBytes: the size of the ring of preview bytes (by default 64 bytes an
    ///   entry, at most 8 MiB).
    init(capacity: Int, filePath: String?, textBytes: Int? = nil) {
        self.capacity = capacity
        self.filePath = filePath
        ring = TraceRing(capacity: capacity, textsCapacity: textBytes ?? min(max(capacity, 1_000) * 64, 8 << 20))
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
        case .hello, .state, .messageError, .goAway, .itemError, .clockSet, .clockAck:
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
            payload.withUnsafeBufferPointer { ring.writeText($0, into: &slot) }
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
        if var transferId { transferId.withUTF8 { ring.writeText($0, into: &slot) } }
        return append(&slot)
    }

    /// Records an entry of another kind with its members.
    @discardableResult
    func record(_ kind: TraceEntry.Kind, _ fields: @autoclosure () -> JSONObject) -> UInt64? {
        guard isOn else { return nil }
        clockIsStale = true
        return append(Slot(kind: kind), Detail(fields: fields()))
    }

    /// The link brought bytes: the frames in them take a time read after this.
    func bytesArrived() {
        clockIsStale = true
    }

    /// The device's clock moved, or changed (a watch that starts or stops following a manual
    /// clock): what follows takes a time read after it.
    func clockMoved() {
        clockIsStale = true
        manualClockLoop = clockLoop.flatMap { $0._withUnsafeGuaranteedRef { $0.clock.isManual } ? $0 : nil }
    }

    /// The time of an entry recorded now (``clock``); never earlier than the one before.
    @inline(__always)
    func time() -> Int64 {
        if clockIsStale {
            if manualClockLoop == nil {
                let now = Syscall.realtime()
                clock = max(clock, Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000)
            } else {
                clock = max(clock, manualTime())
            }
            clockIsStale = false
        }
        return clock
    }

    /// The manual clock's wall-clock time, in microseconds.
    @inline(never)
    private func manualTime() -> Int64 {
        manualClockLoop?._withUnsafeGuaranteedRef { $0.wallMicroseconds } ?? 0
    }

    /// Appends an entry of a frequent kind: a frame, note or op without a ``Detail``.
    /// (Inlined into each recorder: the slot is filled in where it was made and copied once,
    /// into the ring.)
    @inline(__always)
    func append(_ slot: inout Slot, time: Int64? = nil) -> UInt64 {
        // First: asking for the cause may write the running op's entry.
        let cause = self.cause
        if let cause, lastNumber + 1 - cause > UInt64(UInt32.max) { return append(slot, Detail(fields: [:]), time: time) }
        lastNumber += 1
        if let cause { slot.causeDistance = UInt32(lastNumber - cause) }
        slot.time = time ?? self.time()
        if fileDescriptor >= 0 || follow != nil { pass(slot, number: lastNumber, nil) }
        if capacity > 0 { ring.store(slot, number: lastNumber, detail: nil) }
        return lastNumber
    }

    /// Appends an entry with its ``Detail`` (a rare kind, or a cause too far back for its slot).
    func append(_ new: Slot, _ newDetail: Detail, time: Int64? = nil) -> UInt64 {
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
        if capacity > 0 { ring.store(slot, number: number, detail: detail) }
        return number
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
        if let index = peerIndices[peer] { return UInt16(truncatingIfNeeded: index + 1) }
        peers.append(peer)
        peerIndices[peer] = peers.count - 1
        return UInt16(truncatingIfNeeded: peers.count)
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
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkControl
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
/// Recording is cheap: a frame becomes a small record (its numbers and at most
/// ``previewBytes`` of its payload, shared, not copied when small); the JSON entry is built
/// only when someone reads it (`trace.get`), follows it (`trace.entry`) or when it goes to
/// the trace file, which is written once a loop turn. Secrets never enter a record: op
/// arguments and results are not recorded, AUTH frames show their size only, and payload
/// previews show Data values (where PowerAuth packets and their token secrets travel) by their
/// size only.
final class Tracer {
    /// How many entries the ring keeps by default (`--trace-entries`).
    static let defaultCapacity = 10_000
    /// Payloads up to this size are kept whole for a preview; longer ones by their size only.
    static let previewBytes = 256

    struct FrameRecord {
        var outgoing: Bool
        var peer: String?
        var frame: Frame
        var size: Int
        /// The length of a message's or reply's payload (kept in `frame` only when small).
        var payloadLength = 0
    }

    /// What the app was told of a transfer: frequent, so kept without building a JSON object.
    struct NoteRecord {
        var name: StaticString
        var seq: UInt64?
        var transferId: String?
        var peer: String?
    }

    struct Record {
        var n: UInt64
        var time: Int64
        var kind: TraceEntry.Kind
        var cause: UInt64?
        var frame: FrameRecord?
        var note: NoteRecord?
        var fields: JSONObject
    }

    let capacity: Int
    private let filePath: String?
    private var fileDescriptor: Int32 = -1
    private var fileBuffer: [UInt8] = []
    private var ring: [Record] = []
    private var ringStart = 0
    private(set) var lastNumber: UInt64 = 0
    var side = ""
    var device = ""
    private let pid = Int64(getpid())
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

    init(capacity: Int, filePath: String?) {
        self.capacity = capacity
        self.filePath = filePath
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

    /// Records a frame sent (`outgoing`) or received on the link with `peer`.
    @discardableResult
    func frame(_ frame: Frame, outgoing: Bool, peer: String?) -> UInt64? {
        guard isOn else { return nil }
        var kept = frame
        switch frame {
        case .message(let id, let wantsReply, let payload) where payload.bytes.count > Self.previewBytes:
            kept = .message(id: id, wantsReply: wantsReply, payload: payload.isData ? .data([]) : .dictionary([]))
        case .reply(let id, let payload) where payload.bytes.count > Self.previewBytes:
            kept = .reply(id: id, payload: payload.isData ? .data([]) : .dictionary([]))
        case .item(let channel, let seq, let flags, let payload) where payload.count > Self.previewBytes:
            kept = .item(channel: channel, seq: seq, flags: flags, payload: [])
        case .fileChunk(let seq, let offset, _):
            kept = .fileChunk(seq: seq, offset: offset, data: [])
        case .auth:
            kept = .auth(proof: [])
        default:
            break
        }
        var record = FrameRecord(outgoing: outgoing, peer: peer, frame: kept, size: FrameEncoder.encodedLength(of: frame))
        if case .message(_, _, let payload) = frame { record.payloadLength = payload.bytes.count }
        if case .reply(_, let payload) = frame { record.payloadLength = payload.bytes.count }
        return append(.frame, frame: record, note: nil, [:])
    }

    /// Records a note (`message.received`, `userInfo.received`, a `didFinish` without error, ...).
    @discardableResult
    func note(_ name: StaticString, seq: UInt64? = nil, transferId: String? = nil, peer: String?) -> UInt64? {
        guard isOn else { return nil }
        return append(.note, frame: nil, note: NoteRecord(name: name, seq: seq, transferId: transferId, peer: peer), [:])
    }

    /// Records an entry of another kind with its members.
    @discardableResult
    func record(_ kind: TraceEntry.Kind, _ fields: @autoclosure () -> JSONObject) -> UInt64? {
        guard isOn else { return nil }
        return append(kind, frame: nil, note: nil, fields())
    }

    /// Runs `body` with `cause` as the cause of what it records (nil keeps the current one).
    func withCause<T>(_ cause: UInt64?, _ body: () throws -> T) rethrows -> T {
        guard let cause else { return try body() }
        let saved = (currentCause, runningOp)
        currentCause = cause
        runningOp = nil
        defer { (currentCause, runningOp) = saved }
        return try body()
    }

    /// Runs `body` for the control op `name` of client `client`: the op's entry is written
    /// (with the time it arrived) only if something it causes is, now or later (`number(of:)`).
    func withOp<T>(_ name: String, client: UInt64, _ body: (PendingOp?) throws -> T) rethrows -> T {
        guard isOn else { return try body(nil) }
        let op = PendingOp(name: name, client: client, time: Self.now())
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
        let number = append(.op, frame: nil, note: nil, ["op": .string(op.name), "client": .int(Int64(op.client))], time: op.time)
        op.number = number
        return number
    }

    private static func now() -> Int64 {
        let now = Syscall.realtime()
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
    }

    private func append(_ kind: TraceEntry.Kind, frame: FrameRecord?, note: NoteRecord?, _ fields: JSONObject,
                        time: Int64? = nil) -> UInt64 {
        let cause = self.cause
        lastNumber += 1
        let record = Record(n: lastNumber, time: time ?? Self.now(), kind: kind, cause: cause, frame: frame, note: note, fields: fields)
        if capacity > 0 {
            if ring.count < capacity {
                ring.append(record)
            } else {
                ring[ringStart] = record
                ringStart = (ringStart + 1) % capacity
            }
        }
        if fileDescriptor >= 0 || follow != nil {
            let entry = self.entry(record)
            if fileDescriptor >= 0 { fileBuffer.append(contentsOf: TraceFile.line(entry)) }
            follow?(entry)
        }
        return lastNumber
    }

    /// Writes what this turn recorded to the trace file.
    func flush() {
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
        guard !ring.isEmpty else { return [] }
        let oldest = ring[ringStart].n
        let skip = after >= oldest ? Int(after - oldest + 1) : 0
        guard skip < ring.count else { return [] }
        let count = min(limit, ring.count - skip)
        return (0..<count).map { entry(ring[(ringStart + skip + $0) % ring.count]) }
    }

    /// The number of the oldest entry the ring still has.
    var oldestNumber: UInt64? { ring.isEmpty ? nil : ring[ringStart].n }

    private func entry(_ record: Record) -> TraceEntry {
        var object: JSONObject = ["n": .int(Int64(record.n)), "t": .int(record.time), "side": .string(side),
                                  "device": .string(device), "pid": .int(pid), "kind": .string(record.kind.rawValue)]
        if let frame = record.frame { Self.describe(frame, into: &object) }
        if let note = record.note {
            object["name"] = .string("\(note.name)")
            if let seq = note.seq { object["seq"] = .int(Int64(clamping: seq)) }
            if let transferId = note.transferId { object["transferId"] = .string(transferId) }
            if let peer = note.peer { object["peer"] = .string(peer) }
        }
        for (key, value) in record.fields { object[key] = value }
        if let cause = record.cause { object["cause"] = .int(Int64(cause)) }
        return TraceEntry(object)
    }

    private static func describe(_ record: FrameRecord, into object: inout JSONObject) {
        object["dir"] = .string(record.outgoing ? "out" : "in")
        if let peer = record.peer { object["peer"] = .string(peer) }
        object["type"] = .string(record.frame.type.name)
        object["size"] = .int(Int64(record.size))
        func number(_ key: String, _ value: UInt64) { object[key] = .int(Int64(clamping: value)) }
        switch record.frame {
        case .hello(let hello):
            object["preview"] = .string("\(hello.role.name) '\(hello.deviceId)' v\(hello.minVersion)-\(hello.maxVersion)")
        case .auth, .ready:
            break
        case .state(let state):
            object["preview"] = .string("\(state.activationState.name), app \(state.appState.name), flags 0x\(String(state.flags.rawValue, radix: 16))")
        case .message(let id, let wantsReply, let payload):
            number("id", id)
            object["wantsReply"] = .bool(wantsReply)
            object["preview"] = .string(preview(payload, length: record.payloadLength))
        case .reply(let id, let payload):
            number("id", id)
            object["preview"] = .string(preview(payload, length: record.payloadLength))
        case .messageError(let id, let code, let description):
            number("id", id)
            object["code"] = .int(Int64(code))
            object["preview"] = .string(TracePreview.clip(description))
        case .messageAck(let id):
            number("id", id)
        case .ping(let value), .pong(let value):
            number("id", value)
        case .goAway(let code, let reason):
            object["code"] = .int(Int64(code))
            object["preview"] = .string((GoAwayCode(rawValue: code).map { "\($0)" } ?? "code \(code)") + ": " + TracePreview.clip(reason))
        case .item(let channel, let seq, let flags, let payload):
            number("channel", UInt64(channel))
            number("seq", seq)
            if flags != 0 { object["flags"] = .int(Int64(flags)) }
            object["preview"] = .string(channel == 3 ? "file header" : TracePreview.text(payload, isData: false))
        case .ack(let channel, let seq):
            number("channel", UInt64(channel))
            number("seq", seq)
        case .fileChunk(let seq, let offset, _):
            number("channel", 3)
            number("seq", seq)
            number("offset", offset)
        case .fileChunkAck(let seq, _, let received, let committed):
            number("channel", 3)
            number("seq", seq)
            number("receivedOffset", received)
            number("committedOffset", committed)
        case .fileCancel(let seq):
            number("channel", 3)
            number("seq", seq)
        case .itemError(let channel, let seq, let code, let description):
            number("channel", UInt64(channel))
            number("seq", seq)
            object["code"] = .int(Int64(code))
            object["preview"] = .string(TracePreview.clip(description))
        }
    }

    /// Data by its length (also when it was not kept), a small dictionary by its keys.
    private static func preview(_ payload: MessagePayload, length: Int) -> String {
        payload.isData ? "<\(length) bytes>" : TracePreview.text(payload.bytes, isData: false)
    }
}

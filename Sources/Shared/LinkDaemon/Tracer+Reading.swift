import LinkControl
import LinkJSON
import LinkTrace
import WireProtocol

/// Entries as JSON, made from their slots when someone reads the trace (`trace.get`), follows it
/// or when they go to the trace file.
extension Tracer {
    /// The entries numbered after `after`, oldest first, at most `limit`.
    func entries(after: UInt64, limit: Int) -> [TraceEntry] {
        guard let oldest = oldestNumber else { return [] }
        let skip = after >= oldest ? Int(after - oldest + 1) : 0
        guard skip < ring.count else { return [] }
        return (skip..<min(ring.count, skip + limit)).map { index in
            let slot = ring.slot(index)
            let number = oldest + UInt64(index)
            return entry(slot, number: number, slot.bits.contains(.hasDetail) ? ring.detail(of: number) : nil)
        }
    }

    /// The number of the oldest entry the ring still has (the ring holds the newest entries,
    /// one after another).
    var oldestNumber: UInt64? { ring.count == 0 ? nil : lastNumber - UInt64(ring.count) + 1 }

    /// How many details the trace holds: at most one for each entry in the ring.
    var detailCount: Int { ring.detailCount }

    func entry(_ slot: Slot, number: UInt64, _ detail: Detail?) -> TraceEntry {
        var object: JSONObject = [
            "n": .int(Int64(number)), "t": .int(slot.time), "side": .string(side),
            "device": .string(device), "pid": .int(pid), "kind": .string(slot.kind.rawValue),
        ]
        if slot.kind == .frame {
            describe(slot, into: &object)
        } else if let name = slot.note {
            object["name"] = .string(name.rawValue)
            if slot.bits.contains(.hasNumber) { object["seq"] = .int(Int64(clamping: slot.number)) }
            if let text = ring.text(of: slot) { object["transferId"] = .string(String(decoding: text, as: UTF8.self)) }
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
        case .hello?, .auth?, .ready?, .state?, .messageError?, .goAway?, .itemError?, .clockSet?, .clockAck?, nil:
            // The rare types' members are in their detail (``rareFields(_:)``); AUTH and READY have none.
            break
        }
    }

    /// Data by its length; a small dictionary by its keys and short values while its bytes are
    /// kept; a larger one (or one whose bytes were overwritten) as `{…}`.
    private func preview(_ slot: Slot) -> String {
        if slot.bits.contains(.isData) { return "<\(slot.payloadLength) bytes>" }
        if let bytes = ring.text(of: slot) { return TracePreview.text(bytes, isData: false) }
        return "{…}"
    }

    /// What the entry of a frame of a rare type says besides its type and size.
    static func rareFields(_ frame: Frame) -> JSONObject {
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
        case .clockSet(let setting):
            number("round", setting.round)
            let wall = ISO8601Timestamp.string(fromMilliseconds: Int64(clamping: setting.wallMilliseconds))
            object["preview"] = .string("\(setting.isManual ? "manual" : "system") clock \(wall)")
        case .clockAck(let round, let next):
            number("round", round)
            object["preview"] = .string(next.map { "next timer in \($0) ms" } ?? "no timer")
        default:
            break
        }
        return object
    }
}

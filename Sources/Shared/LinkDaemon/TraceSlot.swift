import LinkJSON
import LinkTrace
import WireProtocol

/// What the trace keeps of an entry, and in what form (``Tracer`` records them, ``TraceRing``
/// holds them).
extension Tracer {
    /// One entry as the ring keeps it: plain values only, 48 bytes (the default ring of them
    /// is about a core's L2 cache; the entry's number is its place in the ring). What a field
    /// means depends on the entry's kind: a frame's id or seq and a note's seq share
    /// ``number``, a text's place, a chunk's offset and an op's name share ``wide``.
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
}

extension Tracer.Slot {
    mutating func set(number value: UInt64) {
        number = value
        bits.insert(.hasNumber)
    }
}

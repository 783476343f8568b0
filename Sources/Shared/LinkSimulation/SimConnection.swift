import LinkSession
import WireProtocol

/// One connection of the simulated link: two ordered byte streams with latency. Nothing
/// inside a connection is lost, duplicated or reordered; a cut ends both streams after a
/// drawn prefix of what was in flight, and each side learns of it when it reads past that.
final class SimConnection {
    /// One direction's receiving end, and the sending side's handshake state.
    final class End {
        var handshake: LinkHandshake
        var established = false
        var decoder = FrameDecoder()
        /// Bytes on their way to this end, with their arrival times (nondecreasing).
        var inbound: [(time: Int64, bytes: [UInt8], carriesFileChunk: Bool)] = []
        /// When this end reads the end of the stream; nil while it is open.
        var endOfStream: Int64?
        /// This end has seen the connection end and let it go.
        var released = false

        init(handshake: LinkHandshake) { self.handshake = handshake }
    }

    let number: Int
    let phone: End
    let watch: End

    init(number: Int, phone: LinkHandshake, watch: LinkHandshake) {
        self.number = number
        self.phone = End(handshake: phone)
        self.watch = End(handshake: watch)
    }

    func end(_ role: Role) -> End { role == .phone ? phone : watch }
    func peerEnd(of role: Role) -> End { role == .phone ? watch : phone }

    var isOpen: Bool { phone.endOfStream == nil && watch.endOfStream == nil }

    /// Sends `bytes` from `role` at `now`: split into pieces that arrive in order, so that the
    /// reader sees frames cut across reads.
    func write(_ bytes: [UInt8], from role: Role, now: Int64, latency: Int64, carriesFileChunk: Bool, random: inout SimRandom) {
        let end = peerEnd(of: role)
        guard end.endOfStream == nil, !bytes.isEmpty else { return }
        var arrival = max(end.inbound.last?.time ?? 0, now + (latency > 0 ? random.int64(0...latency) : 0))
        var start = 0
        while start < bytes.count {
            let length = random.chance(0.5) ? bytes.count - start : random.int(1...(bytes.count - start))
            end.inbound.append((arrival, Array(bytes[start..<start + length]), carriesFileChunk))
            start += length
            arrival += random.int64(0...1)
        }
    }

    /// Ends the connection at `now`: each direction keeps a drawn prefix of what is in flight
    /// (possibly ending inside a frame). Returns whether a file chunk was cut off.
    @discardableResult
    func cut(now: Int64, random: inout SimRandom) -> Bool {
        var cutFileChunk = false
        for end in [phone, watch] where end.endOfStream == nil {
            let arrived = end.inbound.prefix { $0.time <= now }.count
            let kept = arrived + random.int(0...(end.inbound.count - arrived))
            cutFileChunk = cutFileChunk || end.inbound[kept...].contains { $0.carriesFileChunk }
            if kept < end.inbound.count, random.chance(0.5), !end.inbound[kept].bytes.isEmpty {
                // Part of the next piece gets through.
                let piece = end.inbound[kept]
                end.inbound[kept] = (piece.time, Array(piece.bytes.prefix(random.int(0...piece.bytes.count - 1))), piece.carriesFileChunk)
                end.inbound.removeSubrange((kept + 1)...)
            } else {
                end.inbound.removeSubrange(kept...)
            }
            end.endOfStream = max(now, end.inbound.last?.time ?? now) + random.int64(0...5)
        }
        return cutFileChunk
    }

    /// The one side died: what it sent still arrives, then the end of the stream; it reads nothing more.
    func sideDied(_ role: Role, now: Int64) {
        let peer = peerEnd(of: role)
        if peer.endOfStream == nil { peer.endOfStream = max(now, peer.inbound.last?.time ?? now) }
        let own = end(role)
        own.inbound.removeAll()
        own.endOfStream = own.endOfStream ?? now
        own.released = true
    }
}

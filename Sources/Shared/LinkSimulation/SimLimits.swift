import LinkSession
import LinkStore
import WireProtocol

/// The limits the session ships with, checked on what crosses the link and what the apps are
/// told. Their figures are the documented ones, stated here rather than read from the
/// session's configuration, so that a changed default is a failure. Worlds that run the shipped
/// configuration (``SimOptions/shippedLimits``) reach them with bursts; the checks hold in
/// every world.
final class SimLimits {
    /// docs/wire-protocol.md: "at most 2,048 ITEMs of one channel sent on the link and not yet
    /// acknowledged".
    static let itemsInFlight = 2_048
    /// docs/wire-protocol.md: FILE_CHUNKs "each at most 256 KiB, keeping the bytes sent and not
    /// yet written by the receiver (sent − `receivedOffset`) at most 4 MiB".
    static let fileBytesInFlight: UInt64 = 4 << 20
    static let fileChunkBytes = 256 << 10
    /// docs/wire-protocol.md: "After 3 mismatches of one file it discards it and answers
    /// `rejected`."
    static let fileMismatches = 3
    /// docs/control-protocol.md, `received.list`: "immediate messages are kept in memory (the
    /// newest 1,000, and at most 256 KiB of payload ...; the newest message is always kept)".
    static let receivedListCount = 1_000
    static let receivedListBytes = 256 << 10

    unowned let world: SimWorld

    /// The userInfo ITEMs one side sent on its current connection, oldest first, those from
    /// `acknowledged` on without an ACK. Plain items go in `seq` order (worlds on the shipped
    /// limits send no other); an item a complication item passed may be counted a little
    /// longer, which only small worlds, far below the limit, do.
    private final class ItemsOnTheLink {
        let connection: Int
        var sent: [UInt64] = []
        var acknowledged = 0
        var unacknowledged: Int { sent.count - acknowledged }
        init(connection: Int) { self.connection = connection }
    }

    /// The file one side streams on its current connection: the end of its last chunk and the
    /// receiver's `receivedOffset` as the sender last heard it.
    private struct FileOnTheLink {
        var connection = 0
        var seq: UInt64 = 0
        var sentEnd: UInt64 = 0
        var receivedOffset: UInt64 = 0
    }

    private var items: [Role: ItemsOnTheLink] = [:]
    private var files: [Role: FileOnTheLink] = [:]
    /// Mismatched checks of each incoming file handed to the receiving session since its last
    /// restore (the count is the session's memory, as the daemon's is), and the files that had
    /// their third: given up, with the sender told (`rejected`) or, while the link is down,
    /// not; such a file comes again as a new one when the sender offers it again (its ITEM).
    private var mismatches: [Role: [UInt64: Int]] = [:]
    private var givenUp: [Role: Set<UInt64>] = [:]
    /// The transfer each incoming file `seq` names (a rolled-back enqueue at the sender may
    /// give its number to another file).
    private var incomingTransfer: [Role: [UInt64: String]] = [:]
    /// Messages each side's session recorded since it started: `seq` and payload bytes.
    private var received: [Role: [(seq: UInt64, bytes: Int)]] = [:]
    /// Set when a turn rolled back after the session recorded a message: its memory then holds
    /// one whose notification was withdrawn, until the next start.
    private var receivedUncertain: Set<Role> = []
    /// The encoded size of every message sent, by item number (the sender's own knowledge).
    var messageSizes: [Int: Int] = [:]

    init(world: SimWorld) { self.world = world }

    // MARK: - Frames

    func sent(_ frame: Frame, by role: Role, on connection: Int) {
        switch frame {
        case .item(let channel, let seq, _, _) where channel == QueueChannel.userInfo.rawValue:
            var link = items[role] ?? ItemsOnTheLink(connection: connection)
            if link.connection != connection { link = ItemsOnTheLink(connection: connection) }
            items[role] = link
            link.sent.append(seq)
            if link.unacknowledged > Self.itemsInFlight {
                world.history.fail(
                    "the \(role.name) has \(link.unacknowledged) userInfo ITEMs on the link without an ACK, over the \(Self.itemsInFlight) the protocol allows"
                )
            } else if link.unacknowledged == Self.itemsInFlight {
                world.coverage.count(.itemsInFlightLimit)
            }
        case .fileChunk(let seq, let offset, let data):
            var file = files[role] ?? FileOnTheLink()
            if file.connection != connection || file.seq != seq { file = FileOnTheLink(connection: connection, seq: seq, receivedOffset: offset) }
            file.sentEnd = offset + UInt64(data.count)
            let inFlight = file.sentEnd - min(file.receivedOffset, file.sentEnd)
            if inFlight > Self.fileBytesInFlight {
                world.history.fail(
                    "the \(role.name) has \(inFlight) bytes of file \(seq) on the link that the receiver has not written, over the \(Self.fileBytesInFlight) the protocol allows"
                )
            } else if inFlight == Self.fileBytesInFlight {
                world.coverage.count(.fileWindowFull)
            }
            if data.count > Self.fileChunkBytes {
                world.history.fail("the \(role.name) sent a FILE_CHUNK of \(data.count) bytes, over \(Self.fileChunkBytes)")
            }
            files[role] = file
        case .fileChunkAck(let seq, let flags, _, _) where flags.contains(.rejected):
            world.coverage.count(.fileRejected)
            if givenUp[role]?.remove(seq) == nil {
                world.history.fail(
                    "the \(role.name) gave up file \(seq) after \(mismatches[role]?[seq] ?? 0) mismatched checks, not \(Self.fileMismatches)")
            }
            mismatches[role]?[seq] = nil
        case .fileChunkAck(let seq, let flags, _, _) where flags.contains(.resume):
            if givenUp[role]?.contains(seq) == true {
                world.history.fail("the \(role.name) asked for file \(seq) again after \(Self.fileMismatches) mismatched checks")
            }
        default:
            break
        }
    }

    func received(_ frame: Frame, by role: Role, on connection: Int) {
        switch frame {
        case .ack(let channel, let seq) where channel == QueueChannel.userInfo.rawValue:
            guard let link = items[role], link.connection == connection else { return }
            while link.acknowledged < link.sent.count, link.sent[link.acknowledged] <= seq { link.acknowledged += 1 }
        case .item(let channel, let seq, _, let payload) where channel == QueueChannel.file.rawValue:
            // Another file under this number, or offered again after it was given up while the
            // link was down: a new file.
            let transferId = (try? FileHeader(decoding: payload))?.transferId
            if givenUp[role]?.remove(seq) != nil || incomingTransfer[role]?[seq] != transferId {
                mismatches[role]?[seq] = nil
                givenUp[role]?.remove(seq)
            }
            incomingTransfer[role, default: [:]][seq] = transferId
        case .fileChunkAck(let seq, _, let receivedOffset, _):
            guard var file = files[role], file.connection == connection, file.seq == seq else { return }
            file.receivedOffset = receivedOffset
            files[role] = file
        default:
            break
        }
    }

    // MARK: - Files

    /// A SHA-256 check that did not match was handed to `role`'s session.
    func mismatchHanded(seq: UInt64, by role: Role) {
        mismatches[role, default: [:]][seq, default: 0] += 1
        if mismatches[role]![seq]! == Self.fileMismatches { givenUp[role, default: []].insert(seq) }
    }

    // MARK: - received.list

    func messageRecorded(_ item: ReceivedItem, by role: Role) {
        guard case .dictionary(let content) = item.content, let n = SimHistory.number(content.encoded), let size = messageSizes[n] else {
            return
        }
        received[role, default: []].append((item.seq, size))
    }

    /// The answer to `received.list` without `after`: the newest messages within the count and
    /// the byte budget, the newest always.
    func checkReceivedList(_ items: [ReceivedItem], by role: Role) {
        guard !receivedUncertain.contains(role) else { return }
        let recorded = received[role] ?? []
        var kept = 0
        var bytes = 0
        for message in recorded.reversed() {
            if kept == Self.receivedListCount { break }
            if kept > 0, bytes + message.bytes > Self.receivedListBytes { break }
            kept += 1
            bytes += message.bytes
        }
        let expected = recorded.suffix(kept).map(\.seq)
        let answered = items.map(\.seq)
        if answered != expected {
            world.history.fail(
                "the \(role.name)'s received.list has \(answered.count) messages (\(answered.first.map(String.init) ?? "-")...\(answered.last.map(String.init) ?? "-")); the newest within \(Self.receivedListCount) and \(Self.receivedListBytes) bytes are \(expected.count) (\(expected.first.map(String.init) ?? "-")...\(expected.last.map(String.init) ?? "-"))"
            )
        }
        if recorded.count > Self.receivedListCount { world.coverage.count(.receivedListFull) }
        if recorded.reduce(0, { $0 + $1.bytes }) > Self.receivedListBytes, kept < recorded.count { world.coverage.count(.receivedListBytesFull) }
    }

    // MARK: - Restarts

    /// `role`'s session was made again from its store: at a start (`atStart`), or after a
    /// rolled-back turn.
    func restored(_ role: Role, atStart: Bool) {
        mismatches[role] = [:]
        givenUp[role] = []
        if atStart {
            received[role] = []
            receivedUncertain.remove(role)
        } else {
            receivedUncertain.insert(role)
        }
    }
}

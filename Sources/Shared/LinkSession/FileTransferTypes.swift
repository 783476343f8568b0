import LinkStore
import WireProtocol

/// `transferFile` and the calls around it, as control commands.
public enum FileCommand: Sendable {
    /// Copy the file at `path` into the outbox and queue it; `metadata` is an encoded
    /// dictionary, or nil for none.
    case transfer(path: String, metadata: [UInt8]?)
    /// `outstandingFileTransfers`.
    case outstanding
    /// `WCSessionFileTransfer.cancel()`.
    case cancel(transferId: String)
}

/// One entry of `outstandingFileTransfers`.
public struct OutstandingFileTransfer: Hashable, Sendable {
    public var transferId: String
    /// The copy in the outbox that is being sent.
    public var path: String
    /// The encoded metadata dictionary; empty when there is none.
    public var metadata: [UInt8]
    public var totalBytes: UInt64
    /// The bytes the receiver has made durable, as last heard from it.
    public var completedBytes: UInt64
    /// Whether the file is on the link now.
    public var isTransferring: Bool
}

/// The outcome of copying a file into the outbox.
public struct CopiedFile: Hashable, Sendable {
    public var totalBytes: UInt64
    /// SHA-256 of the bytes copied.
    public var sha256: [UInt8]

    public init(totalBytes: UInt64, sha256: [UInt8]) {
        self.totalBytes = totalBytes
        self.sha256 = sha256
    }
}

/// A file the app received (`session(_:didReceive:)` with a `WCSessionFile`).
public struct ReceivedFile: Hashable, Sendable {
    /// The receiver's sequence number, shared with `received.list`.
    public var seq: UInt64
    /// The sender's transfer id.
    public var transferId: String
    /// Where the file is now: in this side's inbox directory.
    public var path: String
    /// The encoded metadata dictionary; empty when there is none.
    public var metadata: [UInt8]
    public var totalBytes: UInt64

    public init(seq: UInt64, transferId: String, path: String, metadata: [UInt8], totalBytes: UInt64) {
        self.seq = seq
        self.transferId = transferId
        self.path = path
        self.metadata = metadata
        self.totalBytes = totalBytes
    }

    /// The payload of the file's inbox row: a binary property list dictionary.
    public func encoded() -> [UInt8] {
        let dictionary: [String: PropertyListValue] = [
            "transferId": .string(transferId), "path": .string(path),
            "metadata": .data(metadata), "totalBytes": .integer(Int64(clamping: totalBytes)),
        ]
        return (try? PropertyListCodec.encode(dictionary)) ?? []
    }

    /// Reads an inbox row's payload; nil when it is not one.
    public init?(seq: UInt64, payload: [UInt8]) {
        guard let dictionary = try? PropertyListCodec.decodeDictionary(payload),
            case .string(let transferId)? = dictionary["transferId"],
            case .string(let path)? = dictionary["path"],
            case .data(let metadata)? = dictionary["metadata"],
            case .integer(let total)? = dictionary["totalBytes"], total >= 0
        else { return nil }
        self.init(seq: seq, transferId: transferId, path: path, metadata: metadata, totalBytes: UInt64(total))
    }
}

/// What the app is told about files (a delegate callback in WatchConnectivity terms), or
/// what the log should say.
public enum FileNotification: Hashable, Sendable {
    /// The receiver has made `completedBytes` of the file durable.
    case progress(transferId: String, completedBytes: UInt64, totalBytes: UInt64)
    /// `session(_:didFinish:error:)`: the receiver has the whole file, or the transfer failed.
    case didFinish(transferId: String, error: SessionError?, earlier: EarlierTransfer? = nil)
    /// `session(_:didReceive:)`.
    case received(ReceivedFile)
    /// Worth a line in the log: a checksum mismatch, an unusable file header.
    case problem(String)
}

/// File work the runtime performs for the session. The session names every file; the runtime
/// opens, reads, writes, syncs and renames them.
public enum FileAction: Sendable, Hashable {
    /// Copy `source` to `destination` (a new file), syncing it, and report the size and
    /// SHA-256 with ``LinkSession/fileCopied(token:result:now:)``. Starts at once; the copy
    /// runs in bounded steps across loop turns.
    case copyIntoOutbox(token: RequestToken, source: String, destination: String)
    /// Read `length` bytes at `offset` of `path` and send them as FILE_CHUNK `seq`. A file
    /// that cannot be read is reported with ``LinkSession/outboxFileFailed(seq:error:now:)``.
    case sendChunk(seq: UInt64, path: String, offset: UInt64, length: Int)
    /// Write received bytes at `offset` of the partial file `path` (created if missing).
    case write(path: String, offset: UInt64, data: [UInt8])
    /// Make what was written to `path` durable: it precedes the commit of its offset.
    case sync(path: String)
    /// Check the SHA-256 of the first `totalBytes` of `path`; when it matches, sync it and
    /// move it to `destination`, and when it does not, empty it. Reported with
    /// ``LinkSession/fileVerified(seq:matched:path:now:)``.
    case verify(seq: UInt64, path: String, totalBytes: UInt64, sha256: [UInt8], destination: String)
    /// Delete `path` if it exists.
    case removeFile(path: String)

    /// Whether the runtime performs it at once, ahead of the turn's commit. Received bytes
    /// and their sync must be on disk before the commit that records their offset, and a
    /// verified file must be in the inbox before the commit that delivers it. The others wait
    /// for the commit like every action that follows a `.persist`: a file is deleted, and a
    /// chunk sent, only once the store no longer needs, or already has, what they depend on.
    public var precedesCommit: Bool {
        switch self {
        case .copyIntoOutbox, .write, .sync, .verify: return true
        case .sendChunk, .removeFile: return false
        }
    }
}

/// Where the session keeps files, below `root` (the daemon's `<state>/files`).
public struct FilePaths: Hashable, Sendable {
    public let root: String

    public init(root: String) {
        self.root = root
    }

    /// Copies being sent, one per transfer.
    public var outboxDirectory: String { root + "/outbox" }
    /// Files being received.
    public var partialDirectory: String { root + "/partial" }
    /// Files received whole and verified, handed to the app.
    public var inboxDirectory: String { root + "/inbox" }

    public func outbox(_ transferId: String) -> String { outboxDirectory + "/" + transferId }
    public func partial(_ transferId: String) -> String { partialDirectory + "/" + transferId }
    /// A received file keeps the sender's name, as `WCSessionFile.fileURL` does on a device; the
    /// transfer's own directory keeps two files of one name apart.
    public func inbox(transferId: String, name: String) -> String { inboxDirectory + "/" + transferId + "/" + name }

    /// The name a file travels under: the last component of `path`, cut to
    /// ``FileHeader/maximumNameLength`` bytes at a character boundary; `file` when there is none.
    public static func fileName(ofPath path: String) -> String {
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        var name = ""
        for character in last where character != "\0" {
            if name.utf8.count + String(character).utf8.count > FileHeader.maximumNameLength { break }
            name.append(character)
        }
        return FileHeader.isValid(name: name) ? name : "file"
    }
}

/// The file channel's state in memory: the transfer on the link, copies in progress, and
/// the files being received.
final class FileTransferState {
    /// The file being sent on the current link.
    struct Stream {
        var seq: UInt64
        var transferId: String
        var totalBytes: UInt64
        /// The receiver answered the file's ITEM and said where to start.
        var isResumed = false
        /// The next byte to send.
        var sentOffset: UInt64 = 0
        /// What the receiver has written, as last heard: bytes in flight are `sentOffset - receivedOffset`.
        var receivedOffset: UInt64 = 0
    }

    /// How far a queued file is, as the receiver last said, and what was last reported.
    struct Progress {
        var committed: UInt64 = 0
        var reported: UInt64 = 0
        var reportedAt: Int64?
    }

    /// A copy into the outbox that waits to become a transfer.
    struct PendingCopy {
        var transferId: String
        var name: String
        var metadata: [UInt8]
        /// ``ItemFlags/madeByApp`` when an app process asked for it.
        var flags: ItemFlags
    }

    /// A file being received.
    struct Incoming {
        var record: IncomingFileRecord
        var header: FileHeader
        /// Bytes written to the partial file (the first `record.committedOffset` are synced).
        var receivedOffset: UInt64
        var isVerifying = false
        var mismatches = 0
    }

    var stream: Stream?
    var headers: [UInt64: FileHeader] = [:]
    var progress: [UInt64: Progress] = [:]
    /// Files whose every byte went on the link at some point: cancelling them may be too late.
    var fullySent: Set<UInt64> = []
    var copies: [RequestToken: PendingCopy] = [:]
    var incoming: [UInt64: Incoming] = [:]
    /// Files that got chunks this turn: each gets one FILE_CHUNK_ACK at the end of the turn.
    var acknowledgementsDue: Set<UInt64> = []
    var now: Int64 = 0
}

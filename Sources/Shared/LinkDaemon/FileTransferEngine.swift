import LinkCrypto
import LinkRuntime
import LinkSession
import LinkStore
import LinkSystem
import WireProtocol

/// Performs the file work the session asks for (``FileAction``): copies into the outbox,
/// chunk reads, writes and syncs of received bytes, SHA-256 checks, moves into the inbox,
/// deletions. It decides nothing: the session names every file and every offset.
///
/// Everything runs on the loop's thread. Jobs that read a whole file (a copy, a check of a
/// file whose digest is not already known) advance a few MiB a loop turn
/// (``copyBytesPerTurn``, ``checkBytesPerTurn``) through one fixed ``bufferSize`` buffer, so
/// a large file neither blocks the loop nor grows memory.
/// Results come back through the callbacks, always in a later task of the loop, never from
/// inside the call that started the work.
final class FileTransferEngine {
    static let bufferSize = 1 << 20
    /// A copy step reads, hashes, writes and syncs this much (the sync dominates).
    static let copyBytesPerTurn = 2 << 20
    /// A check step reads and hashes this much.
    static let checkBytesPerTurn = 8 << 20

    /// A received file being written, with the digest of its first `hashedUpTo` bytes while
    /// they arrived in order from byte 0 (nil once they did not: the check reads the file).
    private final class PartialFile {
        let file: RandomAccessFile
        var digest: SHA256Digest? = SHA256Digest()
        var hashedUpTo: UInt64 = 0

        init(file: RandomAccessFile) { self.file = file }
    }

    let paths: FilePaths
    let loop: EventLoop
    let logger: Logger
    let buffer: UnsafeMutableRawBufferPointer
    private var partials: [String: PartialFile] = [:]
    private var reading: RandomAccessFile?
    /// The running checks, by path: a check whose entry is gone or changed stops.
    private var checks: [String: UInt64] = [:]
    private var nextCheck: UInt64 = 1

    /// A copy into the outbox finished.
    var copyFinished: ((RequestToken, Result<CopiedFile, SessionError>) -> Void)?
    /// A check finished: the sequence number, whether the digest matched, the destination.
    var verified: ((UInt64, Bool, String) -> Void)?
    /// A check could not read, sync or move the file.
    var verifyFailed: ((UInt64, Error) -> Void)?
    /// The outbox copy of the file `seq` cannot be read.
    var outboxUnreadable: ((UInt64, SessionError) -> Void)?

    init(loop: EventLoop, logger: Logger, paths: FilePaths) {
        self.loop = loop
        self.logger = logger
        self.paths = paths
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 4096)
    }

    deinit {
        buffer.deallocate()
    }

    // MARK: - Start

    /// Puts the files in line with the committed state: a received file that was moved into
    /// the inbox by a turn that never committed goes back to its partial file, and a partial
    /// file shorter than its committed offset starts again from 0. At start
    /// (`removingOrphans`) it also creates the directories (mode 0700) and deletes the copies
    /// and partial files no transfer refers to, left by a crash.
    func recover(_ state: inout DurableState, removingOrphans: Bool) throws {
        if removingOrphans {
            for directory in [paths.root, paths.outboxDirectory, paths.partialDirectory, paths.inboxDirectory] {
                try FileSystem.ensurePrivateDirectory(directory)
            }
            let copies = Set(state.outbox.filter { $0.channel == .file }.map { paths.outbox($0.transferId) })
            for name in try FileSystem.directoryEntries(paths.outboxDirectory) {
                let path = paths.outboxDirectory + "/" + name
                if !copies.contains(path) {
                    logger.debug("file: removing \(path): no transfer refers to it")
                    try FileSystem.removeRecursively(path)
                }
            }
        }
        var expected: Set<String> = []
        for index in state.incomingFiles.indices {
            let record = state.incomingFiles[index]
            let partial = paths.partial(record.transferId)
            expected.insert(partial)
            if FileSystem.regularFileSize(partial) == nil, let header = try? FileHeader(decoding: record.header) {
                let moved = paths.inbox(transferId: header.transferId, name: header.name)
                if FileSystem.regularFileSize(moved) != nil {
                    logger.info("file: \(moved) was received but not recorded before a restart; checking it again")
                    try FileSystem.rename(moved, to: partial)
                }
            }
            let size = FileSystem.regularFileSize(partial) ?? 0
            if size < record.committedOffset {
                logger.warning("file: \(partial) has \(size) bytes, fewer than the \(record.committedOffset) recorded; receiving it again from byte 0")
                state.incomingFiles[index].committedOffset = 0
            }
        }
        for name in try FileSystem.directoryEntries(paths.partialDirectory) where removingOrphans {
            let path = paths.partialDirectory + "/" + name
            if !expected.contains(path) {
                logger.debug("file: removing \(path): no transfer refers to it")
                try FileSystem.removeRecursively(path)
            }
        }
    }

    /// Forgets the receiving side's open files and stops its checks, after the turn that
    /// asked for them was rolled back.
    func reset() {
        partials.removeAll()
        reading = nil
        checks.removeAll()
    }

    // MARK: - Actions

    /// Performs an action that precedes the turn's commit; a failure fails the turn.
    func performBeforeCommit(_ action: FileAction) throws {
        switch action {
        case .copyIntoOutbox(let token, let source, let destination):
            startCopy(token: token, source: source, destination: destination)
        case .write(let path, let offset, let data):
            try write(path: path, offset: offset, data: data)
        case .sync(let path):
            try partial(path).file.synchronizeData()
        case .verify(let seq, let path, let totalBytes, let sha256, let destination):
            startCheck(seq: seq, path: path, totalBytes: totalBytes, sha256: sha256, destination: destination)
        case .sendChunk, .removeFile:
            preconditionFailure("\(action) waits for the commit")
        }
    }

    /// The FILE_CHUNK for `.sendChunk`, or nil when the copy cannot be read (reported).
    func chunk(seq: UInt64, path: String, offset: UInt64, length: Int) -> Frame? {
        do {
            if reading?.path != path {
                reading = try RandomAccessFile(path: path, mode: .read)
            }
            let file = reading!
            var failure: Error?
            let data = [UInt8](unsafeUninitializedCapacity: length) { bytes, count in
                do { count = try file.read(into: UnsafeMutableRawBufferPointer(bytes), at: offset) } catch {
                    failure = error
                    count = 0
                }
            }
            if let failure { throw failure }
            guard data.count == length else {
                throw FileSystemError(path: path, problem: "ends at byte \(offset + UInt64(data.count)); \(offset + UInt64(length)) expected")
            }
            return .fileChunk(seq: seq, offset: offset, data: data)
        } catch {
            reading = nil
            logger.error("file: cannot read the outbox copy \(path): \(error)")
            loop.execute { [weak self] in
                self?.outboxUnreadable?(seq, .wc(.fileAccessDenied, "the outbox copy \(path) cannot be read: \(error)"))
            }
            return nil
        }
    }

    /// Deletes `path`, closing it and stopping a check of it first.
    func remove(_ path: String) {
        partials[path] = nil
        if reading?.path == path { reading = nil }
        checks[path] = nil
        do { try FileSystem.removeFile(path) } catch {
            logger.warning("file: cannot remove \(path): \(error)")
        }
        // A received file's own directory goes with it when nothing else is in it.
        if path.hasPrefix(paths.inboxDirectory + "/") {
            let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            if directory != paths.inboxDirectory, (try? FileSystem.directoryEntries(directory))?.isEmpty == true {
                try? FileSystem.removeRecursively(directory)
            }
        }
    }

    // MARK: - Receiving

    private func partial(_ path: String) throws -> PartialFile {
        if let open = partials[path] { return open }
        let existed = FileSystem.regularFileSize(path) != nil
        let file = try RandomAccessFile(path: path, mode: .readWrite)
        if !existed { try FileSystem.synchronizeDirectory(paths.partialDirectory) }
        let partial = PartialFile(file: file)
        partials[path] = partial
        return partial
    }

    private func write(path: String, offset: UInt64, data: [UInt8]) throws {
        let partial = try partial(path)
        do {
            try data.withUnsafeBytes { bytes in try partial.file.write(bytes, at: offset) }
        } catch {
            if let error = error as? SystemError, error.errno.isNoSpace {
                logger.error(
                    "file: no room for \(data.count) bytes at byte \(offset) of \(path) (\(WCErrorCode.insufficientSpace.rawValue) \(WCErrorCode.insufficientSpace.name)): \(error); the sender is told (ITEM_ERROR) and the transfer fails"
                )
            }
            partials[path] = nil
            throw error
        }
        if let digest = partial.digest, partial.hashedUpTo == offset {
            digest.update(data)
            partial.hashedUpTo += UInt64(data.count)
        } else {
            partial.digest = nil
        }
    }

    private func startCheck(seq: UInt64, path: String, totalBytes: UInt64, sha256: [UInt8], destination: String) {
        let check = nextCheck
        nextCheck += 1
        checks[path] = check
        if let open = partials[path], let digest = open.digest, open.hashedUpTo == totalBytes {
            open.digest = nil
            let matched = digest.finalize() == sha256
            loop.execute { [weak self] in
                guard let self, self.checks[path] == check else { return }
                self.finishCheck(seq: seq, path: path, matched: matched, destination: destination)
            }
            return
        }
        partials[path] = nil
        let file: RandomAccessFile
        do {
            file = try RandomAccessFile(path: path, mode: .readWrite)
        } catch {
            checks[path] = nil
            loop.execute { [weak self] in self?.verifyFailed?(seq, error) }
            return
        }
        logger.debug("file: checking \(path) (\(totalBytes) bytes) by reading it back")
        let digest = SHA256Digest()
        var offset: UInt64 = 0
        func step() {
            guard checks[path] == check else { return }
            do {
                var budget = Self.checkBytesPerTurn
                while offset < totalBytes, budget > 0 {
                    let want = Int(min(UInt64(buffer.count), totalBytes - offset))
                    let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset)
                    if count == 0 { break }
                    digest.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                    offset += UInt64(count)
                    budget -= count
                }
                if offset < totalBytes, budget > 0 {
                    // The file is shorter than announced: it cannot match.
                    finishCheck(seq: seq, path: path, matched: false, destination: destination)
                    return
                }
                if offset < totalBytes {
                    loop.execute(step)
                    return
                }
                finishCheck(seq: seq, path: path, matched: digest.finalize() == sha256, destination: destination)
            } catch {
                checks[path] = nil
                verifyFailed?(seq, error)
            }
        }
        loop.execute(step)
    }

    /// A match is synced and moved into the inbox; a mismatch is emptied, to be received again.
    private func finishCheck(seq: UInt64, path: String, matched: Bool, destination: String) {
        checks[path] = nil
        do {
            let file = try partials[path]?.file ?? RandomAccessFile(path: path, mode: .readWrite)
            partials[path] = nil
            if matched {
                try file.synchronizeData()
                file.close()
                let directory = String(destination[..<(destination.lastIndex(of: "/") ?? destination.endIndex)])
                // The transfer's directory is durable in the inbox once created; the rename, once its directory is synced.
                try FileSystem.ensurePrivateDirectory(directory)
                try FileSystem.rename(path, to: destination)
                try FileSystem.synchronizeDirectory(directory)
            } else {
                try file.truncate(to: 0)
                partials[path] = PartialFile(file: file)
            }
        } catch {
            verifyFailed?(seq, error)
            return
        }
        verified?(seq, matched, destination)
    }
}

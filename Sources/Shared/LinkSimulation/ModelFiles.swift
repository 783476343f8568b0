import LinkCrypto
import LinkSession
import LinkStore
import WireProtocol

/// The runtime's file work on files in memory, with the page cache of a real disk: a SIGKILL
/// keeps what was written, a power cut loses what was written but not synced. Results (a copy
/// done, a check done) come back as events delivered in later turns, as the runtime's loop does.
package struct ModelFiles {
    /// What survives a crash.
    package private(set) var durable: [String: [UInt8]] = [:]
    /// What a reader sees now.
    package private(set) var current: [String: [UInt8]] = [:]
    /// Files outside the daemon that `file.transfer` copies from.
    package var sources: [String: [UInt8]] = [:]
    /// The SHA-256 of files this disk corrupts whenever it receives them: their check never
    /// matches (a bad disk or a bad cable, as the receiver sees it).
    package var corruptsEveryCopyOf: Set<[UInt8]> = []

    package enum Event {
        case copied(RequestToken, Result<CopiedFile, SessionError>)
        case verified(seq: UInt64, matched: Bool, path: String)
        case unreadable(seq: UInt64, SessionError)
    }

    package private(set) var events: [Event] = []
    /// Every chunk read for sending: (path, offset).
    package private(set) var chunksRead: [(path: String, offset: UInt64)] = []

    package mutating func takeEvent() -> Event? {
        events.isEmpty ? nil : events.removeFirst()
    }

    package init() {}

    /// The daemon dies: its pending results are gone; a power cut also loses what was not synced.
    package mutating func crash(powerCut: Bool = true) {
        if powerCut { current = durable }
        events.removeAll()
    }

    /// What the reader sees now, synced or not.
    package func bytes(_ path: String) -> [UInt8]? { current[path] }

    private mutating func remove(_ path: String) {
        current[path] = nil
        durable[path] = nil
    }

    package func exists(_ path: String) -> Bool { current[path] != nil }

    package func paths(under directory: String) -> [String] {
        current.keys.filter { $0.hasPrefix(directory + "/") }.sorted()
    }

    /// Performs an action; a chunk to send comes back as a frame.
    package mutating func perform(_ action: FileAction) -> Frame? {
        switch action {
        case .copyIntoOutbox(let token, let source, let destination):
            guard let bytes = sources[source] else {
                events.append(.copied(token, .failure(.wc(.fileAccessDenied, "cannot read \(source): No such file or directory (ENOENT)"))))
                return nil
            }
            current[destination] = bytes
            durable[destination] = bytes
            events.append(.copied(token, .success(CopiedFile(totalBytes: UInt64(bytes.count), sha256: SHA256Digest.hash(bytes)))))
        case .sendChunk(let seq, let path, let offset, let length):
            guard let bytes = current[path], Int(offset) + length <= bytes.count else {
                events.append(.unreadable(seq: seq, .wc(.fileAccessDenied, "the outbox copy \(path) cannot be read")))
                return nil
            }
            chunksRead.append((path, offset))
            return .fileChunk(seq: seq, offset: offset, data: Array(bytes[Int(offset)..<Int(offset) + length]))
        case .write(let path, let offset, let data):
            // Taken out of the table, so that writing in place copies nothing.
            var bytes = current.removeValue(forKey: path) ?? []
            let end = Int(offset) + data.count
            if bytes.count < end { bytes += [UInt8](repeating: 0, count: end - bytes.count) }
            bytes.replaceSubrange(Int(offset)..<end, with: data)
            current[path] = bytes
        case .sync(let path):
            durable[path] = current[path] ?? []
        case .verify(let seq, let path, let totalBytes, let sha256, let destination):
            let bytes = current[path] ?? []
            let matched =
                !corruptsEveryCopyOf.contains(sha256) && bytes.count >= Int(totalBytes)
                && SHA256Digest.hash(Array(bytes.prefix(Int(totalBytes)))) == sha256
            if matched {
                current[path] = nil
                durable[path] = nil
                current[destination] = bytes
                durable[destination] = bytes
            } else {
                current[path] = []
                durable[path] = []
            }
            events.append(.verified(seq: seq, matched: matched, path: destination))
        case .removeFile(let path):
            current[path] = nil
            durable[path] = nil
        }
        return nil
    }

    /// What the runtime does at start: a file moved into the inbox by a turn that never
    /// committed goes back, and a partial file shorter than its committed offset starts over.
    package mutating func recover(_ state: inout DurableState, paths: FilePaths, removingOrphans: Bool = true) {
        let copies = Set(state.outbox.filter { $0.channel == .file }.map { paths.outbox($0.transferId) })
        let partials = Set(state.incomingFiles.map { paths.partial($0.transferId) })
        for path in self.paths(under: paths.outboxDirectory) where removingOrphans && !copies.contains(path) { remove(path) }
        for path in self.paths(under: paths.partialDirectory) where removingOrphans && !partials.contains(path) {
            // A received file moved into the inbox by a turn that never committed comes back first.
            if state.incomingFiles.contains(where: { paths.partial($0.transferId) == path }) { continue }
            remove(path)
        }
        for index in state.incomingFiles.indices {
            let record = state.incomingFiles[index]
            let partial = paths.partial(record.transferId)
            if current[partial] == nil, let header = try? FileHeader(decoding: record.header) {
                let moved = paths.inbox(transferId: header.transferId, name: header.name)
                if let bytes = current[moved] {
                    current[partial] = bytes
                    durable[partial] = bytes
                    current[moved] = nil
                    durable[moved] = nil
                }
            }
            if UInt64(current[partial]?.count ?? 0) < record.committedOffset {
                state.incomingFiles[index].committedOffset = 0
            }
        }
    }
}

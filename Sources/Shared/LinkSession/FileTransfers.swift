import LinkStore
import WireProtocol

/// `transferFile`: files ride the file channel (3). The ITEM of a file carries its header
/// (size, SHA-256, name, metadata); its bytes follow in FILE_CHUNK frames, one file at a time
/// and in order, within a window of bytes in flight that the receiver's FILE_CHUNK_ACKs
/// advance. The receiver writes the bytes to a partial file, syncs them and commits their
/// offset every ``LinkSession/Configuration/fileCommitInterval`` bytes, checks the SHA-256 at
/// the end, moves the file into its inbox and only then commits the item, which raises the
/// channel's cursor and sends the ACK that finishes the transfer on the sender. After a link
/// drop or a restart the receiver tells the sender where to resume; nothing is sent twice
/// to the app. See docs/wire-protocol.md, "File transfers".
extension LinkSession {
    /// Where this session keeps the files of transfers.
    public var filePaths: FilePaths { FilePaths(root: fileDirectory) }

    // MARK: - Commands

    func handleFileCommand(_ command: FileCommand, token: RequestToken) {
        switch command {
        case .transfer(let path, let metadata):
            startFileTransfer(path: path, metadata: metadata ?? [], token: token)
        case .outstanding:
            actions.append(.respond(token, .success(.outstandingFiles(outstandingFileTransfers()))))
        case .cancel(let transferId):
            cancelFileTransfer(transferId, token: token)
        }
    }

    private func startFileTransfer(path: String, metadata: [UInt8], token: RequestToken) {
        if let failure = activationFailure() ?? pairingFailure() {
            actions.append(.respond(token, .failure(failure)))
            return
        }
        guard metadata.count <= configuration.maximumUserInfoLength else {
            actions.append(
                .respond(
                    token,
                    .failure(
                        .wc(
                            .payloadTooLarge,
                            "the metadata is \(metadata.count) bytes; it is limited to \(configuration.maximumUserInfoLength) bytes"))))
            return
        }
        let transferId = configuration.makeTransferId?() ?? transferIds.next()
        files.copies[token] = FileTransferState.PendingCopy(
            transferId: transferId, name: FilePaths.fileName(ofPath: path),
            metadata: metadata, flags: acceptedItemFlags)
        actions.append(.file(.copyIntoOutbox(token: token, source: path, destination: filePaths.outbox(transferId))))
    }

    /// The copy into the outbox that `.copyIntoOutbox` started is done: the transfer is
    /// queued and the request answered once that is committed, or the request fails.
    public func fileCopied(token: RequestToken, result: Result<CopiedFile, SessionError>, now: Int64) -> [SessionAction] {
        guard let copy = files.copies.removeValue(forKey: token) else { return drain() }
        switch result {
        case .failure(let error):
            actions.append(.respond(token, .failure(error)))
        case .success(let copied):
            let header = FileHeader(
                totalBytes: copied.totalBytes, sha256: copied.sha256, transferId: copy.transferId,
                name: copy.name, metadata: copy.metadata)
            let item = enqueue(.file, payload: header.encoded(), flags: copy.flags, transferId: copy.transferId)
            if attachedApp != nil { noteAccepted(item) }
            files.headers[item.seq] = header
            actions.append(.respond(token, .success(.transfer(transferId: copy.transferId, remainingComplicationTransfers: nil))))
            pumpFiles()
        }
        return drain()
    }

    func outstandingFileTransfers() -> [OutstandingFileTransfer] {
        queue(.file).items.compactMap { item in
            guard let header = files.headers[item.seq] else { return nil }
            let stream = files.stream
            return OutstandingFileTransfer(
                transferId: item.transferId, path: filePaths.outbox(item.transferId),
                metadata: header.metadata, totalBytes: header.totalBytes,
                completedBytes: files.progress[item.seq]?.committed ?? 0,
                isTransferring: isLinkUp && stream?.seq == item.seq && stream?.isResumed == true)
        }
    }

    /// Cancels a queued file. False when it is no longer queued (delivered, cancelled,
    /// unknown) or when every byte of it went on the link already: it may arrive.
    private func cancelFileTransfer(_ transferId: String, token: RequestToken) {
        guard let item = queue(.file).items.first(where: { $0.transferId == transferId }) else {
            actions.append(.respond(token, .success(.cancelled(false))))
            return
        }
        guard !files.fullySent.contains(item.seq) else {
            actions.append(.respond(token, .success(.cancelled(false))))
            return
        }
        removeOutboundFile(item)
        actions.append(.respond(token, .success(.cancelled(true))))
        pumpFiles()
    }

    /// Fails a queued file whose bytes are not all on the link yet; false when there is none.
    func failUnsentFile(_ transferId: String, error: SessionError) -> Bool {
        guard let item = queue(.file).items.first(where: { $0.transferId == transferId }),
            !files.fullySent.contains(item.seq)
        else { return false }
        fileRefused(item, error: error)
        return true
    }

    /// Drops a queued file for good: its row, its outbox copy, and what the receiver has of it.
    private func removeOutboundFile(_ item: OutboundItem) {
        queue(.file).removeAll { $0.seq == item.seq }
        actions.append(.persist(.removeOutbound(.file, seq: item.seq)))
        forgetOutboundFile(item)
        if isLinkUp { actions.append(.send(.fileCancel(seq: item.seq))) }
        if files.stream?.seq == item.seq { files.stream = nil }
    }

    private func forgetOutboundFile(_ item: OutboundItem) {
        files.headers[item.seq] = nil
        files.progress[item.seq] = nil
        files.fullySent.remove(item.seq)
        actions.append(.file(.removeFile(path: filePaths.outbox(item.transferId))))
    }

    // MARK: - Sending

    /// Announces the oldest queued file, and once the receiver said where to resume, sends its
    /// bytes while the window has room.
    func pumpFiles() {
        let queue = queue(.file)
        guard isLinkUp, queue.isResumed, queuedItemsMayGo, let head = queue.items.first else { return }
        guard var stream = files.stream, stream.seq == head.seq else {
            guard let header = files.headers[head.seq] else { return }
            files.stream = FileTransferState.Stream(seq: head.seq, transferId: head.transferId, totalBytes: header.totalBytes)
            actions.append(.send(.item(channel: QueueChannel.file.rawValue, seq: head.seq, flags: 0, payload: head.payload)))
            queue.sentUpTo = max(queue.sentUpTo, head.seq)
            return
        }
        guard stream.isResumed else { return }
        let path = filePaths.outbox(stream.transferId)
        while stream.sentOffset < stream.totalBytes,
            stream.sentOffset - min(stream.receivedOffset, stream.sentOffset) < configuration.fileWindowBytes
        {
            let length = Int(min(UInt64(configuration.fileChunkLength), stream.totalBytes - stream.sentOffset))
            actions.append(.file(.sendChunk(seq: stream.seq, path: path, offset: stream.sentOffset, length: length)))
            stream.sentOffset += UInt64(length)
        }
        if stream.sentOffset >= stream.totalBytes { files.fullySent.insert(stream.seq) }
        files.stream = stream
    }

    /// The receiver's word on a file: where to resume, how far it got, or that it gave up.
    private func receiveFileChunkAck(seq: UInt64, flags: FileChunkAckFlags, received: UInt64, committed: UInt64) {
        guard let item = queue(.file).items.first(where: { $0.seq == seq }),
            let header = files.headers[seq]
        else {
            // The receiver holds part of a file this side no longer sends (cancelled while
            // the link was down, or this side's store was reset): it may drop it.
            actions.append(.send(.fileCancel(seq: seq)))
            return
        }
        if flags.contains(.rejected) {
            removeOutboundFile(item)
            transferFinished(
                item,
                error: .wc(
                    .deliveryFailed, "the \(peerName) discarded the file: its SHA-256 did not match \(configuration.fileMismatchLimit) times"))
            pumpFiles()
            return
        }
        reportFileProgress(
            seq: seq, transferId: item.transferId, committed: min(committed, header.totalBytes),
            total: header.totalBytes)
        guard var stream = files.stream, stream.seq == seq else { return }
        if flags.contains(.resume) {
            stream.isResumed = true
            stream.sentOffset = min(received, stream.totalBytes)
            stream.receivedOffset = stream.sentOffset
        } else if stream.isResumed {
            stream.receivedOffset = min(received, stream.sentOffset)
        }
        files.stream = stream
        pumpFiles()
    }

    private func reportFileProgress(seq: UInt64, transferId: String, committed: UInt64, total: UInt64) {
        var progress = files.progress[seq] ?? FileTransferState.Progress()
        progress.committed = committed
        if committed != progress.reported,
            committed == total || committed < progress.reported || committed - progress.reported >= 1 << 20
                || files.now - (progress.reportedAt ?? files.now - 50) >= 50
        {
            progress.reported = committed
            progress.reportedAt = files.now
            actions.append(.notify(.file(.progress(transferId: transferId, completedBytes: committed, totalBytes: total))))
        }
        files.progress[seq] = progress
    }

    /// Files the receiver acknowledged on the channel: it has them whole.
    func filesDelivered(_ items: ArraySlice<OutboundItem>) {
        for item in items {
            if let header = files.headers[item.seq], (files.progress[item.seq]?.reported ?? 0) < header.totalBytes || header.totalBytes == 0 {
                actions.append(
                    .notify(
                        .file(
                            .progress(
                                transferId: item.transferId, completedBytes: header.totalBytes,
                                totalBytes: header.totalBytes))))
            }
            transferFinished(item, error: nil)
            forgetOutboundFile(item)
            if files.stream?.seq == item.seq { files.stream = nil }
        }
    }

    /// The outbox copy of a queued file cannot be read: the transfer fails.
    public func outboxFileFailed(seq: UInt64, error: SessionError, now: Int64) -> [SessionAction] {
        guard let item = queue(.file).items.first(where: { $0.seq == seq }) else { return drain() }
        removeOutboundFile(item)
        transferFinished(item, error: error)
        pumpFiles()
        return drain()
    }

    /// The receiver refused the file (ITEM_ERROR): it leaves the queue with `error`.
    func fileRefused(_ item: OutboundItem, error: SessionError) {
        removeOutboundFile(item)
        transferFinished(item, error: error)
        pumpFiles()
    }

    // MARK: - Receiving

    /// The ITEM of a file: its header. The answer is a FILE_CHUNK_ACK with `resume`, once
    /// what it promises is committed.
    func receiveFileOffer(seq: UInt64, payload: [UInt8]) {
        guard seq > cursor(.file).lastReceived else {
            acknowledgementsDue.insert(.file)  // received whole already
            return
        }
        // The sender sends files in order: an older one still partial here was cancelled.
        for older in files.incoming.keys.sorted() where older < seq {
            discardIncomingFile(older)
        }
        let header: FileHeader
        do {
            header = try FileHeader(decoding: payload)
            if !header.metadata.isEmpty { try PropertyListCodec.checkDictionary(header.metadata) }
        } catch {
            actions.append(.notify(.file(.problem("file item \(seq) from the \(peerName) is unusable and was dropped: \(error)"))))
            var cursor = cursor(.file)
            cursor.lastReceived = seq
            cursors[.file] = cursor
            actions.append(.persist(.setLastReceived(.file, seq)))
            acknowledgementsDue.insert(.file)
            return
        }
        turnReceipts.append(ItemReceipt(channel: .file, seq: seq))
        if let existing = files.incoming[seq] {
            if existing.header == header {
                actions.append(
                    .send(
                        .fileChunkAck(
                            seq: seq, flags: .resume, receivedOffset: existing.receivedOffset,
                            committedOffset: existing.record.committedOffset)))
                if !existing.isVerifying, existing.receivedOffset == header.totalBytes { startFileVerification(seq) }
                return
            }
            discardIncomingFile(seq)  // another file under the same number: the sender's store was reset
        }
        let record = IncomingFileRecord(
            seq: seq, transferId: header.transferId, header: payload, committedOffset: 0,
            receivedAt: configuration.wallClock())
        actions.append(.persist(.beginIncomingFile(record)))
        files.incoming[seq] = FileTransferState.Incoming(record: record, header: header, receivedOffset: 0)
        actions.append(.send(.fileChunkAck(seq: seq, flags: .resume, receivedOffset: 0, committedOffset: 0)))
        if header.totalBytes == 0 { startFileVerification(seq) }
    }

    private func receiveFileChunk(seq: UInt64, offset: UInt64, data: [UInt8]) {
        guard refusals[ItemReceipt(channel: .file, seq: seq)] == nil else { return }
        guard var file = files.incoming[seq], !file.isVerifying, offset == file.receivedOffset else { return }
        guard UInt64(data.count) <= file.header.totalBytes - offset else {
            actions.append(
                .notify(
                    .file(
                        .problem(
                            "a chunk of file \(file.header.transferId) ends at byte \(offset + UInt64(data.count)), past its \(file.header.totalBytes) bytes; ignored"
                        ))))
            return
        }
        let path = filePaths.partial(file.header.transferId)
        actions.append(.file(.write(path: path, offset: offset, data: data)))
        if turnReceipts.last != ItemReceipt(channel: .file, seq: seq) { turnReceipts.append(ItemReceipt(channel: .file, seq: seq)) }
        file.receivedOffset += UInt64(data.count)
        files.acknowledgementsDue.insert(seq)
        if file.receivedOffset == file.header.totalBytes {
            file.isVerifying = true
            files.incoming[seq] = file
            startFileVerification(seq)
            return
        }
        if file.receivedOffset - file.record.committedOffset >= configuration.fileCommitInterval {
            actions.append(.file(.sync(path: path)))
            file.record.committedOffset = file.receivedOffset
            actions.append(.persist(.setIncomingFileOffset(seq: seq, committedOffset: file.receivedOffset)))
        }
        files.incoming[seq] = file
    }

    private func startFileVerification(_ seq: UInt64) {
        guard var file = files.incoming[seq] else { return }
        file.isVerifying = true
        files.incoming[seq] = file
        actions.append(
            .file(
                .verify(
                    seq: seq, path: filePaths.partial(file.header.transferId),
                    totalBytes: file.header.totalBytes, sha256: file.header.sha256,
                    destination: filePaths.inbox(transferId: file.header.transferId, name: file.header.name))))
    }

    /// The SHA-256 check that `.verify` started is done. A match commits the received file
    /// (now at `path`, in the inbox), raises the channel's cursor and delivers it; a mismatch
    /// (the runtime emptied the partial file) asks the sender to send it again from byte 0.
    public func fileVerified(seq: UInt64, matched: Bool, path: String, now: Int64) -> [SessionAction] {
        guard var file = files.incoming[seq], file.isVerifying else {
            // Cancelled meanwhile: the file it moved is nobody's.
            if matched { actions.append(.file(.removeFile(path: path))) }
            return drain()
        }
        guard matched else {
            file.mismatches += 1
            actions.append(
                .notify(
                    .file(
                        .problem(
                            "file \(file.header.transferId) (\(file.header.totalBytes) bytes): the SHA-256 of the received bytes does not match the sender's (\(file.mismatches) of \(configuration.fileMismatchLimit)); \(file.mismatches < configuration.fileMismatchLimit ? "receiving it again from byte 0" : "giving it up")"
                        ))))
            if file.mismatches >= configuration.fileMismatchLimit {
                discardIncomingFile(seq)
                if isLinkUp {
                    actions.append(.send(.fileChunkAck(seq: seq, flags: .rejected, receivedOffset: 0, committedOffset: 0)))
                }
                return drain()
            }
            file.isVerifying = false
            file.receivedOffset = 0
            file.record.committedOffset = 0
            files.incoming[seq] = file
            files.acknowledgementsDue.remove(seq)  // the resume below says it all
            actions.append(.persist(.setIncomingFileOffset(seq: seq, committedOffset: 0)))
            if isLinkUp {
                actions.append(.send(.fileChunkAck(seq: seq, flags: .resume, receivedOffset: 0, committedOffset: 0)))
            }
            return drain()
        }
        files.incoming[seq] = nil
        files.acknowledgementsDue.remove(seq)
        actions.append(.persist(.removeIncomingFile(seq: seq)))
        var cursor = cursor(.file)
        cursor.lastReceived = max(cursor.lastReceived, seq)
        cursors[.file] = cursor
        let received = ReceivedFile(
            seq: allocateReceivedSeq(), transferId: file.header.transferId, path: path,
            metadata: file.header.metadata, totalBytes: file.header.totalBytes)
        let item = InboxItem(
            seq: received.seq, channel: .file, channelSeq: seq, payload: received.encoded(),
            flags: [], receivedAt: configuration.wallClock(), delivered: false)
        actions.append(.persist(.receive(item)))
        undelivered.append(item)
        turnReceipts.append(ItemReceipt(channel: .file, seq: seq))
        acknowledgementsDue.insert(.file)
        deliverPending()
        return drain()
    }

    private func discardIncomingFile(_ seq: UInt64) {
        guard let file = files.incoming.removeValue(forKey: seq) else { return }
        files.acknowledgementsDue.remove(seq)
        actions.append(.persist(.removeIncomingFile(seq: seq)))
        actions.append(.file(.removeFile(path: filePaths.partial(file.header.transferId))))
    }

    // MARK: - Frames, link, acknowledgements

    func receiveFileFrame(_ frame: Frame, now: Int64) {
        files.now = now
        switch frame {
        case .fileChunk(let seq, let offset, let data):
            receiveFileChunk(seq: seq, offset: offset, data: data)
        case .fileChunkAck(let seq, let flags, let received, let committed):
            receiveFileChunkAck(seq: seq, flags: flags, received: received, committed: committed)
        case .fileCancel(let seq):
            discardIncomingFile(seq)
        default:
            break
        }
    }

    /// After the channels' ACKs: the files this side holds in part, so that the sender
    /// learns how far they are and cancels those it no longer sends.
    func filesLinkUp() {
        files.stream = nil
        files.acknowledgementsDue.removeAll()
        for seq in files.incoming.keys.sorted() {
            guard let file = files.incoming[seq] else { continue }
            actions.append(
                .send(
                    .fileChunkAck(
                        seq: seq, flags: [], receivedOffset: file.receivedOffset,
                        committedOffset: file.record.committedOffset)))
        }
    }

    func filesLinkDown() {
        files.stream = nil
        files.acknowledgementsDue.removeAll()
    }

    /// One FILE_CHUNK_ACK for each file that got chunks this turn.
    func flushFileAcknowledgements() {
        if isLinkUp && !files.acknowledgementsDue.isEmpty {
            for seq in files.acknowledgementsDue.sorted() {
                guard let file = files.incoming[seq] else { continue }
                actions.append(
                    .send(
                        .fileChunkAck(
                            seq: seq, flags: [], receivedOffset: file.receivedOffset,
                            committedOffset: file.record.committedOffset)))
            }
        }
        files.acknowledgementsDue.removeAll(keepingCapacity: true)
    }

    /// Rebuilds the file channel's memory from the store (at start, after a failed commit).
    func restoreFiles(_ state: DurableState) {
        files.stream = nil
        files.progress = [:]
        files.fullySent = []
        files.acknowledgementsDue = []
        files.headers = [:]
        for item in queue(.file).items {
            files.headers[item.seq] = try? FileHeader(decoding: item.payload)
        }
        files.incoming = [:]
        for record in state.incomingFiles {
            guard let header = try? FileHeader(decoding: record.header) else { continue }
            let committed = min(record.committedOffset, header.totalBytes)
            files.incoming[record.seq] = FileTransferState.Incoming(record: record, header: header, receivedOffset: committed)
        }
    }
}

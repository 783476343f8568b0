import TestSupport
import XCTest
import LinkSession
import LinkStore
import WireProtocol

/// The file channel with both sessions, in-memory stores and in-memory files: chunks in
/// a window, commits of the receiver's offset, resumption after link drops and crashes,
/// cancel, checksum mismatches, and delivery that waits for activation.
final class FileTransferTests: XCTestCase {
    /// Small numbers, so that a few KiB cross many chunks, windows and commit points.
    private static func configure(_ configuration: inout LinkSession.Configuration) {
        configuration.fileChunkLength = 1_024
        configuration.fileWindowBytes = 4_096
        configuration.fileCommitInterval = 8_192
    }

    private func pair(activated: Bool = true) -> DurablePair {
        let pair = DurablePair(configure: Self.configure)
        if activated {
            pair.command(.phone, .activate)
            pair.command(.watch, .activate)
        }
        pair.setLink(up: true)
        pair.pump()
        return pair
    }

    private func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    /// Starts `file.transfer` of `content` from `role` and runs the copy's turn.
    @discardableResult
    private func transfer(
        _ pair: DurablePair, from role: Role = .phone, _ content: [UInt8], name: String = "data.bin",
        metadata: [String: PropertyListValue]? = nil
    ) -> RequestToken {
        let path = "/source/\(name)"
        pair.side(role).files.sources[path] = content
        let encoded = metadata.map { try! PropertyListCodec.encode($0) }
        let token = pair.command(role, .file(.transfer(path: path, metadata: encoded)))
        pair.deliverFileEvent(to: role)
        return token
    }

    private func transferId(_ result: Result<CommandResult, SessionError>?) -> String? {
        if case .success(.transfer(let id, _))? = result { return id }
        return nil
    }

    private func receivedFiles(_ pair: DurablePair, _ role: Role) -> [ReceivedFile] {
        pair.side(role).notifications.compactMap {
            if case .file(.received(let file)) = $0 { return file }
            return nil
        }
    }

    private func progress(_ pair: DurablePair, _ role: Role) -> [UInt64] {
        pair.side(role).notifications.compactMap {
            if case .file(.progress(_, let completed, _)) = $0 { return completed }
            return nil
        }
    }

    private func finished(_ pair: DurablePair, _ role: Role) -> [(String, SessionError?)] {
        pair.side(role).notifications.compactMap {
            if case .file(.didFinish(let id, let error, _)) = $0 { return (id, error) }
            return nil
        }
    }

    private func outstanding(_ pair: DurablePair, _ role: Role) -> [OutstandingFileTransfer] {
        let token = pair.command(role, .file(.outstanding))
        guard case .success(.outstandingFiles(let transfers))? = pair.side(role).responses[token] else { return [] }
        return transfers
    }

    /// Delivers frames one at a time, both ways, until `condition` holds.
    private func step(_ pair: DurablePair, until condition: () -> Bool) {
        for _ in 0..<100_000 where !condition() {
            let moved =
                pair.deliverOne(to: .watch) || pair.deliverOne(to: .phone)
                || pair.deliverFileEvent(to: .watch) || pair.deliverFileEvent(to: .phone)
            if !moved { return XCTFail("the link went quiet first") }
        }
    }

    private func committedOffset(_ pair: DurablePair, _ role: Role) -> UInt64 {
        pair.side(role).storedState.incomingFiles.first?.committedOffset ?? 0
    }

    // MARK: - Tests

    func testAFileArrivesWholeWithItsMetadataAndFinishes() throws {
        let pair = pair()
        let content = bytes(50_000, seed: 1)
        let token = transfer(pair, content, metadata: ["kind": "photo", "n": 3])
        let id = try XCTUnwrap(transferId(pair.phone.responses[token]))
        XCTAssertTrue(pair.phone.files.exists(pair.phone.session.filePaths.outbox(id)), "the copy is in the outbox")
        XCTAssertEqual(outstanding(pair, .phone).map(\.transferId), [id])
        pair.pump()

        let received = try XCTUnwrap(receivedFiles(pair, .watch).first)
        XCTAssertEqual(receivedFiles(pair, .watch).count, 1)
        XCTAssertEqual(received.transferId, id)
        XCTAssertEqual(received.totalBytes, 50_000)
        XCTAssertEqual(received.path, pair.watch.session.filePaths.inbox(transferId: id, name: "data.bin"))
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(received.metadata), ["kind": "photo", "n": 3])
        XCTAssertEqual(pair.watch.files.durable[received.path], content, "the received file is synced in the inbox")
        XCTAssertEqual(pair.watch.files.paths(under: pair.watch.session.filePaths.partialDirectory), [])
        XCTAssertEqual(pair.watch.storedState.incomingFiles, [])

        XCTAssertEqual(finished(pair, .phone).map(\.0), [id])
        XCTAssertNil(finished(pair, .phone).first?.1)
        let reported = progress(pair, .phone)
        XCTAssertEqual(reported.last, 50_000, "progress ends at 100%")
        XCTAssertEqual(reported, reported.sorted(), "progress never goes back")
        XCTAssertFalse(pair.phone.files.exists(pair.phone.session.filePaths.outbox(id)), "the outbox copy is gone")
        XCTAssertEqual(outstanding(pair, .phone).count, 0)
        XCTAssertEqual(pair.phone.session.status().outstandingFileTransfers, 0)
    }

    func testFilesGoBothWaysInOrderAndAnEmptyFileToo() {
        let pair = pair()
        let first = bytes(9_000, seed: 2), second = bytes(20_000, seed: 3)
        transfer(pair, first, name: "a")
        transfer(pair, [], name: "empty")
        transfer(pair, second, name: "b")
        transfer(pair, from: .watch, bytes(3_000, seed: 4), name: "w")
        pair.pump()
        XCTAssertEqual(receivedFiles(pair, .watch).map(\.totalBytes), [9_000, 0, 20_000])
        XCTAssertEqual(receivedFiles(pair, .watch).map { pair.watch.files.durable[$0.path] }, [first, [], second])
        XCTAssertEqual(receivedFiles(pair, .phone).map(\.totalBytes), [3_000])
        XCTAssertEqual(finished(pair, .phone).count, 3)
        XCTAssertEqual(finished(pair, .watch).count, 1)
    }

    func testTheSenderKeepsAtMostAWindowInFlight() {
        let pair = pair()
        transfer(pair, bytes(100_000, seed: 5))
        var maximumInFlight = 0
        step(pair) {
            let inFlight = pair.watch.inbound.reduce(0) { sum, frame in
                if case .fileChunk(_, _, let data) = frame { return sum + data.count }
                return sum
            }
            maximumInFlight = max(maximumInFlight, inFlight)
            return receivedFiles(pair, .watch).count == 1
        }
        XCTAssertEqual(maximumInFlight, 4_096)
    }

    func testALinkDropResumesWhereTheReceiverIsNotFromZero() {
        let pair = pair()
        let content = bytes(100_000, seed: 6)
        transfer(pair, content)
        step(pair) { committedOffset(pair, .watch) >= 24_576 }
        let before = progress(pair, .phone).last ?? 0
        XCTAssertGreaterThan(before, 0)
        pair.setLink(up: false)
        let read = pair.phone.files.chunksRead.count
        pair.setLink(up: true)
        pair.pump()
        let resumedAt = pair.phone.files.chunksRead[read].offset
        XCTAssertGreaterThanOrEqual(resumedAt, 24_576, "the first chunk after the drop starts where the watch was")
        let after = progress(pair, .phone).drop { $0 < before }
        XCTAssertEqual(Array(after), progress(pair, .phone).suffix(after.count), "progress never goes back across the drop")
        XCTAssertEqual(receivedFiles(pair, .watch).map { pair.watch.files.durable[$0.path] }, [content])
    }

    func testAReceiverCrashResumesFromItsLastCommittedChunk() {
        let pair = pair()
        let content = bytes(100_000, seed: 7)
        transfer(pair, content)
        step(pair) { committedOffset(pair, .watch) >= 40_960 }
        let committed = committedOffset(pair, .watch)
        let read = pair.phone.files.chunksRead.count
        pair.crash(.watch)
        pair.pump()
        let resumedAt = pair.phone.files.chunksRead[read...].first { $0.offset < committed + 4_096 }?.offset
        XCTAssertEqual(resumedAt, committed, "the watch lost what it had not committed and resumes at its committed offset")
        XCTAssertEqual(receivedFiles(pair, .watch).count, 1)
        XCTAssertEqual(pair.watch.files.durable[receivedFiles(pair, .watch)[0].path], content)
    }

    func testASenderCrashResumesAndProgressStartsAboveZero() {
        let pair = pair()
        let content = bytes(100_000, seed: 8)
        transfer(pair, content)
        step(pair) { committedOffset(pair, .watch) >= 32_768 }
        pair.crash(.phone)
        pair.phone.notifications.removeAll()
        pair.pump()
        XCTAssertGreaterThanOrEqual(progress(pair, .phone).first ?? 0, 32_768, "the first progress after the restart is the watch's committed offset")
        XCTAssertEqual(receivedFiles(pair, .watch).map { pair.watch.files.durable[$0.path] }, [content])
        XCTAssertEqual(finished(pair, .phone).count, 1)
    }

    func testCancelMidwayDiscardsTheCopyAndThePartialFile() throws {
        let pair = pair()
        let token = transfer(pair, bytes(100_000, seed: 9))
        let id = try XCTUnwrap(transferId(pair.phone.responses[token]))
        step(pair) { committedOffset(pair, .watch) >= 16_384 }
        let cancel = pair.command(.phone, .file(.cancel(transferId: id)))
        guard case .success(.cancelled(true))? = pair.phone.responses[cancel] else { return XCTFail("\(String(describing: pair.phone.responses[cancel]))") }
        pair.pump()
        XCTAssertEqual(receivedFiles(pair, .watch).count, 0)
        XCTAssertEqual(finished(pair, .phone).count, 0, "a cancelled transfer does not finish")
        XCTAssertFalse(pair.phone.files.exists(pair.phone.session.filePaths.outbox(id)))
        XCTAssertEqual(pair.watch.files.paths(under: pair.watch.session.filePaths.partialDirectory), [])
        XCTAssertEqual(pair.watch.storedState.incomingFiles, [])
        XCTAssertEqual(outstanding(pair, .phone).count, 0)
        let again = pair.command(.phone, .file(.cancel(transferId: id)))
        guard case .success(.cancelled(false))? = pair.phone.responses[again] else { return XCTFail() }
    }

    func testCancelWhileTheLinkIsDownReachesTheReceiverLater() throws {
        let pair = pair()
        let token = transfer(pair, bytes(60_000, seed: 10))
        let id = try XCTUnwrap(transferId(pair.phone.responses[token]))
        step(pair) { committedOffset(pair, .watch) >= 8_192 }
        pair.setLink(up: false)
        pair.command(.phone, .file(.cancel(transferId: id)))
        pair.setLink(up: true)
        pair.pump()
        XCTAssertEqual(pair.watch.storedState.incomingFiles, [], "the watch learns at link up that the file is gone")
        XCTAssertEqual(pair.watch.files.paths(under: pair.watch.session.filePaths.partialDirectory), [])
    }

    func testCancelOnceEveryByteIsOnTheLinkIsRefused() throws {
        let pair = pair()
        let token = transfer(pair, bytes(3_000, seed: 11))
        let id = try XCTUnwrap(transferId(pair.phone.responses[token]))
        step(pair) { pair.watch.inbound.contains { if case .fileChunk(_, 2_048, _) = $0 { return true } else { return false } } }
        let cancel = pair.command(.phone, .file(.cancel(transferId: id)))
        guard case .success(.cancelled(false))? = pair.phone.responses[cancel] else { return XCTFail() }
        pair.pump()
        XCTAssertEqual(receivedFiles(pair, .watch).count, 1)
    }

    func testAChecksumMismatchIsReceivedAgainFromZero() {
        let pair = pair()
        let content = bytes(30_000, seed: 12)
        var tampered = false
        pair.onSend = { _, frame in
            guard !tampered, case .fileChunk(let seq, let offset, var data) = frame, offset == 20_480 else { return frame }
            tampered = true
            data[5] ^= 0xFF
            return .fileChunk(seq: seq, offset: offset, data: data)
        }
        transfer(pair, content)
        let read = pair.phone.files.chunksRead.count
        pair.pump()
        XCTAssertTrue(tampered)
        let received = receivedFiles(pair, .watch)
        XCTAssertEqual(received.count, 1, "delivered once, intact")
        XCTAssertEqual(received.first.flatMap { pair.watch.files.durable[$0.path] }, content)
        XCTAssertEqual(pair.phone.files.chunksRead[read...].filter { $0.offset == 0 }.count, 2, "sent again from byte 0")
        XCTAssertTrue(
            pair.watch.notifications.contains {
                if case .file(.problem(let text)) = $0 { return text.contains("SHA-256") }
                return false
            })
        XCTAssertEqual(finished(pair, .phone).count, 1)
        XCTAssertNil(finished(pair, .phone).first?.1)
    }

    /// docs/wire-protocol.md: the receiver gives a file up after its third mismatch.
    func testAFileThatNeverMatchesIsGivenUp() {
        let pair = pair()
        var attempts = 0
        pair.onSend = { _, frame in
            guard case .fileChunk(let seq, let offset, var data) = frame, offset == 0 else { return frame }
            attempts += 1
            data[0] ^= 0x01
            return .fileChunk(seq: seq, offset: offset, data: data)
        }
        transfer(pair, bytes(5_000, seed: 13))
        pair.pump()
        XCTAssertEqual(attempts, 3, "sent from its start three times, each received whole and mismatched")
        XCTAssertEqual(receivedFiles(pair, .watch).count, 0, "a corrupt file is never delivered")
        guard case .wc(.deliveryFailed, _)?? = finished(pair, .phone).first?.1 else {
            return XCTFail("\(finished(pair, .phone))")
        }
        XCTAssertEqual(pair.phone.session.status().outstandingFileTransfers, 0)
        XCTAssertEqual(pair.watch.storedState.incomingFiles, [])
    }

    func testAFileWaitsForTheReceivingSessionToBeActivated() {
        let pair = DurablePair(configure: Self.configure)
        pair.command(.phone, .activate)
        pair.setLink(up: true)
        pair.pump()
        transfer(pair, bytes(12_000, seed: 14))
        pair.pump()
        XCTAssertTrue(pair.watch.session.status().hasContentPending)
        XCTAssertEqual(receivedFiles(pair, .watch).count, 0)
        XCTAssertEqual(finished(pair, .phone).count, 1, "the watch has the file: the transfer is done")
        pair.command(.watch, .activate)
        XCTAssertEqual(receivedFiles(pair, .watch).count, 1)
        XCTAssertFalse(pair.watch.session.status().hasContentPending)
    }

    func testTransferBeforeActivationAnUnreadableSourceAndLargeMetadataFail() {
        let pair = DurablePair(configure: Self.configure)
        let early = pair.command(.phone, .file(.transfer(path: "/x", metadata: nil)))
        guard case .failure(.wc(.sessionNotActivated, _))? = pair.phone.responses[early] else { return XCTFail() }
        pair.command(.phone, .activate)
        let missing = pair.command(.phone, .file(.transfer(path: "/missing", metadata: nil)))
        pair.deliverFileEvent(to: .phone)
        guard case .failure(.wc(.fileAccessDenied, _))? = pair.phone.responses[missing] else { return XCTFail() }
        let metadata = try! PropertyListCodec.encode(["blob": .data([UInt8](repeating: 1, count: 65_536))])
        let large = pair.command(.phone, .file(.transfer(path: "/x", metadata: metadata)))
        guard case .failure(.wc(.payloadTooLarge, _))? = pair.phone.responses[large] else { return XCTFail() }
        XCTAssertEqual(pair.phone.session.status().outstandingFileTransfers, 0)
    }

    func testFileNamesAreOnePathComponent() {
        XCTAssertEqual(FilePaths.fileName(ofPath: "/tmp/a/photo.jpg"), "photo.jpg")
        XCTAssertEqual(FilePaths.fileName(ofPath: "/tmp/dir/"), "dir")
        XCTAssertEqual(FilePaths.fileName(ofPath: "/"), "file")
        XCTAssertEqual(FilePaths.fileName(ofPath: "/tmp/.."), "file")
        XCTAssertEqual(FilePaths.fileName(ofPath: "/" + String(repeating: "é", count: 150)).utf8.count, 200)
    }

    /// Random crashes before and after commits, link drops and restarts of either side while
    /// files go both ways: each file arrives once, whole, and every answered one arrives.
    func testExactlyOnceAndIntactAcrossRandomCrashes() {
        for seed in testSeeds(default: 1...12) {
            var random = SeededGenerator(seed: seed)
            let pair = pair()
            var contents: [String: [UInt8]] = [:]
            var answered: [Role: Set<String>] = [.phone: [], .watch: []]
            var attempts = 0
            for _ in 0..<1_500 {
                let role: Role = random.next() % 2 == 0 ? .phone : .watch
                let crashPoint: DurablePair.CrashPoint? =
                    switch random.next() % 60 {
                    case 0: .beforeCommit
                    case 1: .afterCommit
                    default: nil
                    }
                switch random.next() % 20 {
                case 0:
                    attempts += 1
                    let content = bytes(Int(random.next() % 30_000), seed: random.next())
                    let path = "/source/f\(attempts)"
                    pair.side(role).files.sources[path] = content
                    contents["f\(attempts)"] = content
                    let token = pair.command(role, .file(.transfer(path: path, metadata: nil)), crash: crashPoint)
                    pair.deliverFileEvent(to: role, crash: nil)
                    if let id = transferId(pair.side(role).responses[token]) { answered[role]!.insert(id) }
                case 1...15:
                    _ = pair.deliverOne(to: role, crash: crashPoint) || pair.deliverFileEvent(to: role, crash: crashPoint)
                case 16:
                    if random.next() % 6 == 0 { pair.crash(role) }
                default:
                    if random.next() % 4 == 0 { pair.setLink(up: !pair.linkUp) }
                }
            }
            pair.setLink(up: true)
            pair.pump()
            for sender in [Role.phone, .watch] {
                let receiver: Role = sender == .phone ? .watch : .phone
                let delivered = pair.side(receiver).store.delivered.filter { $0.channel == .file }
                    .compactMap { ReceivedFile(seq: $0.seq, payload: $0.payload) }
                let ids = delivered.map(\.transferId)
                XCTAssertEqual(Set(ids).count, ids.count, "seed \(seed): no file delivered twice")
                XCTAssertTrue(answered[sender]!.isSubset(of: Set(ids)), "seed \(seed): every answered file arrives")
                for file in delivered {
                    let name = String(file.path.split(separator: "/").last ?? "")
                    let bytes = pair.side(receiver).files.durable[file.path]
                    XCTAssertTrue(
                        bytes != nil && bytes == contents[name],
                        "seed \(seed): \(file.transferId) (\(name)) arrives intact: \(bytes?.count ?? -1) bytes of \(contents[name]?.count ?? -1)")
                }
                XCTAssertEqual(pair.side(sender).session.status().outstandingFileTransfers, 0, "seed \(seed)")
                XCTAssertEqual(
                    pair.side(sender).files.paths(under: pair.side(sender).session.filePaths.outboxDirectory), [],
                    "seed \(seed): no outbox copy left")
                XCTAssertEqual(pair.side(receiver).storedState.incomingFiles, [], "seed \(seed)")
            }
        }
    }
}

import Foundation
import LinkClient
import LinkControl
import LinkCrypto
import WireProtocol
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A watch that holds the pairing key but sends file frames of its own making: names that
/// try to leave the inbox, corrupt bytes, chunks out of place and malformed frames.
final class FileTransferHostilePeerTests: DaemonTestCase {
    private var phone: DaemonProcess!
    private var peer: FakeWatch!

    /// Starts phoned and links the fake watch to it.
    private func start() throws {
        phone = try daemon("phoned", ["--activate"]).startAndWait()
        peer = try FakeWatch(home: home)
    }

    override func tearDown() {
        peer?.close()
        super.tearDown()
    }

    func testAHeaderWhoseNameLeavesTheInboxIsDroppedAndAcknowledged() throws {
        try start()
        let header = headerBytes(transferId: "evil-1", name: "../../escaped", content: Array("x".utf8))
        try peer.send(.item(channel: 3, seq: 1, flags: 0, payload: header))
        XCTAssertEqual(try peer.next(fileChannelAck), .ack(channel: 3, seq: 1))
        XCTAssertEqual(try contents("partial"), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/phone/escaped"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/escaped"))
        XCTAssertTrue(phone.log.contains("unusable"), phone.log)
    }

    func testCorruptBytesAreNeverDeliveredAndTheFileIsAskedForAgain() throws {
        try start()
        let content = Array("hello".utf8)
        try peer.send(.item(channel: 3, seq: 1, flags: 0, payload: headerBytes(transferId: "t-1", name: "greeting.txt", content: content)))
        XCTAssertEqual(try peer.next(resume), .fileChunkAck(seq: 1, flags: .resume, receivedOffset: 0, committedOffset: 0))
        try peer.send(.fileChunk(seq: 1, offset: 3, data: [0x21]))  // not where the file ends: dropped
        try peer.send(.fileChunk(seq: 1, offset: 0, data: Array("hellX".utf8)))
        XCTAssertEqual(
            try peer.next(resume), .fileChunkAck(seq: 1, flags: .resume, receivedOffset: 0, committedOffset: 0),
            "a mismatch is asked for again from byte 0")
        let p = try client(phone)
        XCTAssertEqual(try Received.items(p, kind: "file"), [], "a corrupt file is never delivered")

        try peer.send(.fileChunk(seq: 1, offset: 0, data: content))
        XCTAssertEqual(try peer.next(fileChannelAck), .ack(channel: 3, seq: 1))
        let files = try Received.items(p, kind: "file")
        XCTAssertEqual(files.map { $0["transferId"] }, ["t-1"])
        let path = try XCTUnwrap(files.first?["path"]?.stringValue)
        XCTAssertEqual(path, home + "/phone/files/inbox/t-1/greeting.txt")
        XCTAssertEqual(FileManager.default.contents(atPath: path), Data(content))
        XCTAssertEqual(try contents("partial"), [])

        try peer.send(.item(channel: 3, seq: 1, flags: 0, payload: headerBytes(transferId: "t-1", name: "greeting.txt", content: content)))
        XCTAssertEqual(
            try peer.next(fileChannelAck), .ack(channel: 3, seq: 1),
            "a file offered again after its delivery is only acknowledged")
        XCTAssertEqual(try Received.items(p, kind: "file").count, 1)
    }

    func testAChunkPastTheAnnouncedSizeIsIgnored() throws {
        try start()
        try peer.send(.item(channel: 3, seq: 1, flags: 0, payload: headerBytes(transferId: "t-2", name: "a", content: [1, 2])))
        _ = try peer.next(resume)
        try peer.send(.fileChunk(seq: 1, offset: 0, data: [1, 2, 3]))
        try peer.send(.ping(7))
        XCTAssertEqual(try peer.next { if case .pong = $0 { return true } else { return false } }, .pong(7))
        XCTAssertEqual(FileManager.default.contents(atPath: home + "/phone/files/partial/t-2")?.count ?? 0, 0)
        XCTAssertTrue(phone.log.contains("past its 2 bytes"), phone.log)
    }

    func testAMalformedFileFrameEndsTheLinkWithAReason() throws {
        try start()
        var body: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1, 0]
        body += [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 2]  // committed 2 above received 1
        try peer.sendRaw([0, 0, 0, UInt8(body.count + 1), FrameType.fileChunkAck.rawValue] + body)
        guard case .goAway(let code, let reason)? = try peer.next({ if case .goAway = $0 { return true } else { return false } }) else {
            return XCTFail("no GOAWAY")
        }
        XCTAssertEqual(code, GoAwayCode.malformedFrame.rawValue)
        XCTAssertEqual(reason, "malformed FILE_CHUNK_ACK frame: committedOffset 2 is above receivedOffset 1")
        XCTAssertEqual(try client(phone).status("role"), "phone", "the phone keeps serving")
    }

    // MARK: - Helpers

    private let resume: (Frame) -> Bool = {
        if case .fileChunkAck(_, let flags, _, _) = $0 { return flags.contains(.resume) } else { return false }
    }
    /// An ACK of the file channel other than the one every link starts with.
    private let fileChannelAck: (Frame) -> Bool = { if case .ack(3, let seq) = $0 { return seq > 0 } else { return false } }

    /// A property list holds any double as a date; one that no timestamp names is listed as
    /// `{"$date": null}`, and the daemon keeps serving.
    func testAUserInfoWithADateNoTimestampNamesIsListed() throws {
        try start()
        let userInfo = try PropertyListCodec.encode([
            "far": .date(Date(timeIntervalSinceReferenceDate: 1e300)), "nan": .date(Date(timeIntervalSinceReferenceDate: .nan)),
            "near": .date(Date(timeIntervalSinceReferenceDate: 0)),
        ])
        try peer.send(.item(channel: 1, seq: 1, flags: 0, payload: userInfo))
        XCTAssertEqual(try peer.next { $0 == .ack(channel: 1, seq: 1) }, .ack(channel: 1, seq: 1))
        let p = try client(phone)
        let items = try Received.items(p, kind: "userInfo")
        XCTAssertEqual(items.map { $0["userInfo"] }, [["far": ["$date": nil], "nan": ["$date": nil], "near": ["$date": "2001-01-01T00:00:00.000Z"]]])
        XCTAssertEqual(try p.call("status")["activationState"], "activated", "still serving")
    }

    private func headerBytes(transferId: String, name: String, content: [UInt8]) -> [UInt8] {
        // Written field by field: the encoder refuses the names these tests send.
        var bytes: [UInt8] = []
        withUnsafeBytes(of: UInt64(content.count).bigEndian) { bytes += $0 }
        bytes += SHA256Digest.hash(content)
        for field in [transferId, name] {
            withUnsafeBytes(of: UInt16(field.utf8.count).bigEndian) { bytes += $0 }
            bytes += Array(field.utf8)
        }
        return bytes
    }

    private func contents(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: home + "/phone/files/" + directory).sorted()
    }
}

/// A watch on `link.sock` that completes the handshake with the real pairing key and then
/// sends whatever frames a test gives it.
final class FakeWatch {
    private let fd: Int32
    private var decoder = FrameDecoder()

    init(home: String) throws {
        let key = try [UInt8](Data(contentsOf: URL(fileURLWithPath: home + "/pairing.key")))
        fd = try UnixSocket.connectBlocking(path: home + "/link.sock")
        let nonce = SecureRandom.bytes(LinkProtocol.nonceLength)
        try send(.hello(Hello(role: .watch, deviceId: "fake-watch", nonce: nonce)))
        guard case .hello(let phone)? = try next({ if case .hello = $0 { return true } else { return false } }) else {
            throw HarnessError("the phone sent no HELLO")
        }
        try send(.auth(proof: PairingProof.compute(key: key, senderRole: .watch, senderNonce: nonce, receiverNonce: phone.nonce)))
        guard case .auth? = try next({ if case .auth = $0 { return true } else { return false } }) else {
            throw HarnessError("the phone sent no AUTH")
        }
        try send(.ready)
        guard case .ready? = try next({ $0 == .ready }) else { throw HarnessError("the phone sent no READY") }
        decoder.maximumFrameLength = FrameDecoder.defaultMaximumFrameLength
    }

    func close() {
        Glibc.close(fd)
    }

    func send(_ frame: Frame) throws {
        try UnixSocket.writeAll(fd, FrameEncoder.encode(frame))
    }

    func sendRaw(_ bytes: [UInt8]) throws {
        try UnixSocket.writeAll(fd, bytes)
    }

    /// The next frame that `matches`, skipping others; nil at the end of the stream or after
    /// the 5 s receive timeout.
    func next(_ matches: (Frame) -> Bool) throws -> Frame? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            while let frame = try decoder.next() {
                if matches(frame) { return frame }
            }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return nil }
            decoder.append(buffer[0..<n])
        }
    }
}

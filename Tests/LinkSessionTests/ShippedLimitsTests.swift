import LinkSession
import WireProtocol
import XCTest

/// The session's limits at their boundaries, with the configuration that ships (a default
/// `LinkSession.Configuration`): the last value taken and the first refused, each written as
/// the documentation states it (docs/architecture.md, "Limits and defaults"), never read from
/// the code under test.
final class ShippedLimitsTests: XCTestCase {
    /// A dictionary `{"blob": <Data>}` whose binary property list is exactly `size` bytes: the
    /// limits count the encoded payload, as it crosses the link.
    private func encodedDictionary(ofSize size: Int) throws -> [UInt8] {
        for dataCount in stride(from: size - 50, through: size - 80, by: -1) {
            let encoded = try PropertyListCodec.encode(["blob": .data([UInt8](repeating: 0x5A, count: dataCount))])
            if encoded.count == size { return encoded }
        }
        throw XCTSkip("no one-key dictionary encodes to \(size) bytes")
    }

    func testAUserInfoOf65536EncodedBytesIsQueuedAnd65537IsRefused() throws {
        let pair = activatedPair()
        let limit = try encodedDictionary(ofSize: 65_536)
        guard case .success(.transfer)? = pair.phone.responses[pair.command(.phone, .transferUserInfo(limit))] else {
            return XCTFail("65,536 bytes are within the limit: \(String(describing: pair.phone.responses))")
        }
        let over = try encodedDictionary(ofSize: 65_537)
        assertError(pair.phone.responses[pair.command(.phone, .transferUserInfo(over))], .payloadTooLarge)
        pair.pump()
        XCTAssertEqual(pair.watch.store.delivered.filter { $0.channel == .userInfo }.map(\.payload.count), [65_536])
    }

    func testAnApplicationContextOf262144EncodedBytesIsTakenAnd262145IsRefused() throws {
        let pair = activatedPair()
        let limit = try encodedDictionary(ofSize: 262_144)
        XCTAssertEqual(pair.phone.responses[pair.command(.phone, .updateApplicationContext(limit))], .success(.contextUpdated))
        let over = try encodedDictionary(ofSize: 262_145)
        assertError(pair.phone.responses[pair.command(.phone, .updateApplicationContext(over))], .payloadTooLarge)
        pair.pump()
        XCTAssertEqual(pair.watch.store.delivered.filter { $0.channel == .applicationContext }.map(\.payload.count), [262_144])
    }

    /// docs/wire-protocol.md: a channel has at most 2,048 ITEMs on the link unacknowledged.
    func testAtMost2048ItemsWaitForTheirAcknowledgementOnTheLink() {
        let pair = activatedPair()
        pair.setLink(up: false)
        for n in 1...2_100 { pair.command(.phone, .transferUserInfo(payload(["n": .integer(Int64(n))]))) }
        pair.setLink(up: true)
        // The watch's STATE comes first; the phone's ITEMs follow it without waiting for ACKs.
        while pair.deliverOne(to: .phone) {}
        let items = pair.watch.inbound.filter { if case .item = $0 { return true } else { return false } }
        XCTAssertEqual(items.count, 2_048)
        pair.pump()
        XCTAssertEqual(pair.deliveredUserInfo(.watch).count, 2_100, "the rest follows the acknowledgements")
    }

    /// docs/architecture.md: at most 4 MiB of a file are sent and not yet written by the
    /// receiver; the rest waits for its FILE_CHUNK_ACKs.
    func testAtMostFourMebibytesOfAFileAreInFlight() {
        let pair = activatedPair()
        var sent = 0
        pair.onSend = { role, frame in
            // The first acknowledgement (offset 0) opens the stream; later ones are held back.
            if role == .watch, case .fileChunkAck(_, _, let received, _) = frame, received > 0 { return nil }
            if role == .phone, case .fileChunk(_, _, let data) = frame { sent += data.count }
            return frame
        }
        let path = "/source/big.bin"
        pair.phone.files.sources[path] = [UInt8](repeating: 7, count: 6 << 20)
        pair.command(.phone, .file(.transfer(path: path, metadata: nil)))
        pair.pump()
        XCTAssertEqual(sent, 4_194_304)
    }

    /// A message whose reply never comes fails with 7012 `messageReplyTimedOut` once the
    /// timeout that ships, 10 s, has passed, not a millisecond sooner.
    func testAnUnansweredMessageTimesOutAfterTenSeconds() {
        let pair = SessionPair {
            $0.defaultReplyTimeoutMilliseconds = LinkSession.Configuration(role: $0.role).defaultReplyTimeoutMilliseconds
        }
        pair.linkUp()
        pair.activateBoth()
        pair.command(.watch, .setReplies(ReplyConfiguration(mode: .manual)))
        let token = pair.command(.phone, .sendMessage(.data([1]), wantsReply: true, timeoutMilliseconds: nil))
        pair.advance(by: 9_999)
        XCTAssertNil(pair.result(token), "still waiting at 9,999 ms")
        pair.advance(by: 1)
        assertError(pair.result(token), .messageReplyTimedOut)
    }

    /// After a watch switch the phone's session stays inactive for 2 s at most.
    func testTheInactivePeriodAfterAWatchSwitchIsTwoSeconds() {
        let pair = activatedPair()
        pair.command(.phone, .setAppState(.notRunning))
        pair.command(.watch, .transferUserInfo(payload(["from": "watch"])))
        pair.pump()
        let actions = pair.phone.session.becomeInactive(now: 1_000)
        XCTAssertEqual(pair.phone.session.activationState, .inactive)
        let deadlines = actions.compactMap { action -> Int64? in
            if case .armTimer(.inactiveDelivery, let deadline) = action { return deadline }
            return nil
        }
        XCTAssertEqual(deadlines, [3_000])
    }

    /// `received.list` keeps the newest 1,000 items: the 1,001st pushes the oldest out.
    func testTheReceivedListKeepsTheNewestThousandItems() {
        let watch = LinkSession(configuration: .init(role: .watch))
        _ = watch.handle(.activate, token: RequestToken(1), now: 0)
        _ = watch.linkUp(now: 0)
        func received(_ token: UInt64) -> [UInt64] {
            guard case .respond(_, .success(.received(let items)))? = watch.handle(.receivedList(after: nil), token: RequestToken(token), now: 0).first else {
                XCTFail("received.list answered")
                return []
            }
            return items.map(\.seq)
        }
        for n in 1...1_000 { _ = watch.receive(.message(id: UInt64(n), wantsReply: false, payload: .data([1])), now: 0) }
        XCTAssertEqual(received(2), Array(1...1_000))
        _ = watch.receive(.message(id: 1_001, wantsReply: false, payload: .data([1])), now: 0)
        XCTAssertEqual(received(3), Array(2...1_001))
    }
}

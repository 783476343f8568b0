import Foundation
import LinkClient
import LinkJSON
import LinkSystem
import WireProtocol
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The documented limits of the control socket and of WatchConnectivity's payloads, at their
/// boundaries, against daemons started with no option that changes them: the last value taken
/// and the first refused, written as docs/architecture.md ("Limits and defaults") states them.
final class ShippedLimitsTests: DaemonTestCase {
    /// `{"blob": {"$data": …}}` whose binary property list, as the daemon encodes it for the
    /// link, is exactly `size` bytes: the limits count the encoded dictionary.
    private func dictionary(encodedTo size: Int) throws -> JSONValue {
        for dataCount in stride(from: size - 50, through: size - 80, by: -1) {
            let bytes = [UInt8](repeating: 0x5A, count: dataCount)
            if try PropertyListCodec.encode(["blob": .data(bytes)]).count == size {
                return ["blob": ["$data": .string(Data(bytes).base64EncodedString())]]
            }
        }
        throw XCTSkip("no one-key dictionary encodes to \(size) bytes")
    }

    func testPayloadsAtTheirLimitsAreTakenAndOneByteMoreIsRefused() throws {
        let (_, _, p, w) = try startActivatedPair()
        // WCSession.h: sendMessage's payload, and transferUserInfo's, up to 65,536 bytes.
        _ = try p.call("message.send", ["message": dictionary(encodedTo: 65_536)])
        assertControlError("WCErrorDomain", 7009) { try p.call("message.send", ["message": dictionary(encodedTo: 65_537)]) }
        XCTAssertNotNil(try p.call("userInfo.transfer", ["userInfo": dictionary(encodedTo: 65_536)])["transferId"]?.stringValue)
        assertControlError("WCErrorDomain", 7009) { try p.call("userInfo.transfer", ["userInfo": dictionary(encodedTo: 65_537)]) }
        // The application context, up to 262,144 bytes.
        _ = try p.call("context.update", ["context": dictionary(encodedTo: 262_144)])
        assertControlError("WCErrorDomain", 7009) { try p.call("context.update", ["context": dictionary(encodedTo: 262_145)]) }
        XCTAssertEqual(try p.call("context.get")["applicationContext"], try dictionary(encodedTo: 262_144), "the refused one changed nothing")
        eventually("the userInfo and the context to arrive") {
            let items = try w.call("received.list")["items"]?.arrayValue ?? []
            return items.contains { $0["kind"] == "userInfo" } && items.contains { $0["kind"] == "applicationContext" }
        }
    }

    /// docs/control-protocol.md: a request line of up to 1 MiB (without its newline) is read;
    /// a longer one is answered `lineTooLong`, and the connection goes on.
    func testARequestLineOfOneMebibyteIsReadAndOneByteMoreIsNot() throws {
        let phone = try daemon("phoned").startAndWait()
        let fd = try UnixSocket.connectBlocking(path: phone.controlPath)
        defer { close(fd) }
        var reader = LineReader(fd: fd)
        func request(id: Int, length: Int) -> [UInt8] {
            let head = Array("{\"id\":\(id),\"op\":\"status\",\"pad\":\"".utf8), tail = Array("\"}\n".utf8)
            return head + [UInt8](repeating: UInt8(ascii: "a"), count: length - head.count - tail.count + 1) + tail
        }
        let limit = request(id: 1, length: 1_048_576)
        XCTAssertEqual(limit.count, 1_048_577, "1,048,576 bytes and the newline")
        try UnixSocket.writeAll(fd, limit + request(id: 2, length: 1_048_577) + Array("{\"id\":3,\"op\":\"status\"}\n".utf8))
        let first = try XCTUnwrap(JSON.parse(XCTUnwrap(reader.nextLine())).objectValue)
        XCTAssertEqual(first["id"], 1, "\(first)")
        XCTAssertNotEqual(first[path: "error", "name"], "lineTooLong", "1 MiB is within the limit: \(first)")
        let second = try XCTUnwrap(JSON.parse(XCTUnwrap(reader.nextLine())).objectValue)
        XCTAssertEqual(second[path: "error", "name"], "lineTooLong", "\(second)")
        let third = try XCTUnwrap(JSON.parse(XCTUnwrap(reader.nextLine())).objectValue)
        XCTAssertEqual(third["id"], 3)
        XCTAssertEqual(third["ok"], true)
    }

    /// `received.list` and `trace.get` answer 1,000 entries when asked for no number, and
    /// `trace.get` takes a limit of up to 100,000.
    func testListsAnswerAThousandByDefault() throws {
        let (_, _, p, w) = try startActivatedPair()
        for n in 1...1_001 { _ = try p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n))]]) }
        eventually("1,001 userInfo transfers to arrive", timeout: 30) {
            try w.call("received.list", ["limit": 10_000])["items"]?.arrayValue?.count == 1_001
        }
        let page = try w.call("received.list")
        XCTAssertEqual(page["items"]?.arrayValue?.count, 1_000)
        XCTAssertEqual(page["more"], true)
        XCTAssertEqual(try w.call("trace.get")["entries"]?.arrayValue?.count, 1_000)
        XCTAssertGreaterThan(try w.call("trace.get", ["limit": 100_000])["entries"]?.arrayValue?.count ?? 0, 1_000)
        assertControlError("control", 3) { try w.call("trace.get", ["limit": 100_001]) }
    }
}

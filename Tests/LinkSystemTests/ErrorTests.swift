#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem
import XCTest

final class ErrorTests: XCTestCase {
    func testErrnoDescriptionHasTextAndName() {
        XCTAssertEqual(Errno(rawValue: EADDRINUSE).description, "Address already in use (EADDRINUSE)")
        XCTAssertEqual(Errno.wouldBlock.name, "EAGAIN")
        XCTAssertTrue(Errno(rawValue: 4000).description.contains("4000"))
    }

    func testSystemErrorDescription() {
        let error = SystemError(operation: "bind", errno: .addressInUse, path: "/tmp/x/link.sock")
        XCTAssertEqual(error.description, "bind(/tmp/x/link.sock): Address already in use (EADDRINUSE)")
        XCTAssertEqual(
            SystemError(operation: "epoll_wait", errno: .interrupted).description,
            "epoll_wait: Interrupted system call (EINTR)"
        )
    }
}

final class SystemCallsTests: XCTestCase {
    func testWriteReadAndClose() throws {
        let (a, b) = try UnixSocket.socketPair()
        let written = [UInt8]("hi".utf8).withUnsafeBytes { SystemCalls.write(a, $0) }
        XCTAssertEqual(try written.get(), 2)
        var buffer = [UInt8](repeating: 0, count: 8)
        let first = buffer.withUnsafeMutableBytes { SystemCalls.read(b, into: $0) }
        XCTAssertEqual(try first.get(), 2)
        XCTAssertEqual(Array(buffer[0..<2]), Array("hi".utf8))
        let empty = buffer.withUnsafeMutableBytes { SystemCalls.read(b, into: $0) }
        XCTAssertEqual(try empty.get(), nil, "nothing to read on a non-blocking socket")
        XCTAssertNoThrow(try SystemCalls.close(a).get())
        let eof = buffer.withUnsafeMutableBytes { SystemCalls.read(b, into: $0) }
        XCTAssertEqual(try eof.get(), 0)
        XCTAssertNoThrow(try SystemCalls.close(b).get())
        guard case .failure(let error) = SystemCalls.close(-1) else { return XCTFail("closed -1") }
        XCTAssertEqual(error.errno, .badFileDescriptor)
        let failed = [UInt8]("x".utf8).withUnsafeBytes { SystemCalls.write(-1, $0) }
        XCTAssertThrowsError(try failed.get()) { XCTAssertEqual(($0 as? SystemError)?.errno, .badFileDescriptor, "\($0)") }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem
import TestSupport
import XCTest

final class ProcessAndSocketTests: XCTestCase {
    func testUnlinkRemovesAFileAndAcceptsAMissingOne() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/file"
            try FileSystem.writeFileAtomically(path, [1, 2, 3], mode: 0o600)
            XCTAssertNoThrow(try SystemCalls.unlink(path).get())
            XCTAssertFalse(FileSystem.fileExists(path))
            XCTAssertNoThrow(try SystemCalls.unlink(path).get())
            XCTAssertEqual(SystemCalls.unlink(directory + "/missing/file").isSuccess, true)
        }
    }

    func testUserIDIsTheProcesssRealUser() {
        XCTAssertEqual(SystemCalls.userID(), UInt32(getuid()))
    }

    func testWriteAllWritesEverythingToABlockingDescriptor() throws {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        defer { Syscall.close(fds[0]) }
        let bytes = patternBytes(count: 1000)
        XCTAssertNoThrow(try bytes.withUnsafeBytes { SystemCalls.writeAll(fds[1], $0) }.get())
        Syscall.close(fds[1])
        var read = [UInt8](repeating: 0, count: 2000)
        let count = try read.withUnsafeMutableBytes { try Syscall.readBlocking(fds[0], $0.baseAddress!, $0.count) }
        XCTAssertEqual(Array(read.prefix(count)), bytes)
    }

    func testTCPListenerAcceptsANonBlockingConnection() throws {
        let (listener, port) = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        defer { Syscall.close(listener) }
        XCTAssertNotEqual(port, 0)
        XCTAssertNil(try TCPSocket.accept(listener))
        XCTAssertThrowsError(try TCPSocket.listen(host: "not an address", port: 0)) { error in
            XCTAssertEqual((error as? SystemError)?.errno, .invalidArgument)
        }
    }

    func testABlockingClientConnectsToAUnixListener() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/s.sock"
            let listener = try UnixSocket.listen(path: path)
            defer { UnixSocket.close(listener) }
            let client = try UnixSocket.connectBlocking(path: path)
            defer { Syscall.close(client) }
            XCTAssertEqual(fcntl(client, F_GETFL) & O_NONBLOCK, 0)
            XCTAssertNotEqual(fcntl(client, F_GETFD) & FD_CLOEXEC, 0)
            XCTAssertThrowsError(try UnixSocket.connectBlocking(path: directory + "/none.sock")) { error in
                XCTAssertEqual((error as? SystemError)?.errno, .noSuchFileOrDirectory)
            }
        }
    }

    func testAcceptPendingServesEveryConnectionOfThisUserAndReturnsWhenNoneIsLeft() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/s.sock"
            let listener = try UnixSocket.listen(path: path)
            defer { UnixSocket.close(listener) }
            let clients = try (0..<3).map { _ in try UnixSocket.connectBlocking(path: path) }
            defer { clients.forEach { Syscall.close($0) } }
            var served: [Int32] = []
            var refused = 0
            try UnixSocket.acceptPending(listener, refuse: { _, _ in refused += 1 }, serve: { served.append($0) })
            defer { served.forEach { Syscall.close($0) } }
            XCTAssertEqual(served.count, 3, "each pending connection of this user is served")
            XCTAssertEqual(refused, 0)
            try UnixSocket.acceptPending(listener, refuse: { _, _ in refused += 1 }, serve: { served.append($0) })
            XCTAssertEqual(served.count, 3, "nothing pending: nothing served, no wait")
        }
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

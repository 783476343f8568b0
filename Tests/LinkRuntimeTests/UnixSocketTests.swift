#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkRuntime
import LinkSystem
import TestSupport
import XCTest

final class UnixSocketTests: XCTestCase {
    func testMaximumPathLength() {
        #if os(Linux)
        XCTAssertEqual(UnixSocket.maximumPathLength, 107)
        #else
        XCTAssertEqual(UnixSocket.maximumPathLength, 103)
        #endif
    }

    func testOverlongPathIsRejectedNamingThePath() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/" + String(repeating: "s", count: 108 - directory.utf8.count)
            XCTAssertEqual(path.utf8.count, 109)
            XCTAssertThrowsError(try UnixSocket.listen(path: path)) { error in
                let description = String(describing: error)
                XCTAssertTrue(description.contains(path), description)
                XCTAssertTrue(description.contains("109"), description)
                XCTAssertTrue(description.contains("\(UnixSocket.maximumPathLength)"), description)
                XCTAssertEqual((error as? SocketPathError)?.reason, .tooLong(length: 109, limit: UnixSocket.maximumPathLength))
            }
            XCTAssertThrowsError(try UnixSocket.connect(path: path)) { error in
                XCTAssertTrue(String(describing: error).contains(path))
            }
            XCTAssertFalse(FileSystem.fileExists(path))
        }
    }

    func testPathOfExactlyTheMaximumLengthWorks() throws {
        try withTemporaryDirectory { directory in
            let name = String(repeating: "m", count: UnixSocket.maximumPathLength - directory.utf8.count - 1)
            let path = directory + "/" + name
            XCTAssertEqual(path.utf8.count, UnixSocket.maximumPathLength)
            let listener = try UnixSocket.listen(path: path)
            defer { UnixSocket.close(listener) }
            let client = try UnixSocket.connect(path: path)
            UnixSocket.close(client)
        }
    }

    func testListenSetsModeAndDescriptorFlags() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/link.sock"
            let listener = try UnixSocket.listen(path: path)
            defer { UnixSocket.close(listener) }
            XCTAssertEqual(try fileMode(path), 0o600)
            XCTAssertTrue(isNonBlocking(listener))
            XCTAssertTrue(isCloseOnExec(listener))

            let other = directory + "/control.sock"
            let second = try UnixSocket.listen(path: other, mode: 0o660)
            defer { UnixSocket.close(second) }
            XCTAssertEqual(try fileMode(other), 0o660)
        }
    }

    func testStaleSocketFileIsReplaced() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/link.sock"
            let first = try UnixSocket.listen(path: path)
            UnixSocket.close(first)
            XCTAssertTrue(FileSystem.fileExists(path), "closing leaves the file behind")
            XCTAssertThrowsError(try UnixSocket.connect(path: path)) { error in
                XCTAssertEqual((error as? SystemError)?.errno, .connectionRefused)
            }
            let second = try UnixSocket.listen(path: path)
            defer { UnixSocket.close(second) }
            let client = try UnixSocket.connect(path: path)
            UnixSocket.close(client)
        }
    }

    func testLiveListenerMakesASecondListenFail() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/link.sock"
            let first = try UnixSocket.listen(path: path)
            defer { UnixSocket.close(first) }
            XCTAssertThrowsError(try UnixSocket.listen(path: path)) { error in
                XCTAssertEqual(String(describing: error), "another daemon is already listening on \(path)")
                XCTAssertEqual((error as? SocketPathError)?.reason, .alreadyListening)
            }
            let client = try UnixSocket.connect(path: path)
            UnixSocket.close(client)
        }
    }

    func testNonSocketFileIsNotReplaced() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/link.sock"
            try FileSystem.writeFileAtomically(path, [1, 2, 3], mode: 0o600)
            XCTAssertThrowsError(try UnixSocket.listen(path: path)) { error in
                let description = String(describing: error)
                XCTAssertTrue(description.contains(path), description)
                XCTAssertTrue(description.contains("not a socket"), description)
            }
            XCTAssertEqual(try FileSystem.readFile(path), [1, 2, 3])
        }
    }

    func testConnectToNothingNamesThePath() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/missing.sock"
            XCTAssertThrowsError(try UnixSocket.connect(path: path)) { error in
                guard let error = error as? SystemError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.errno, .noSuchFileOrDirectory)
                XCTAssertEqual(error.path, path)
                XCTAssertTrue(error.description.hasPrefix("connect(\(path)): "), error.description)
            }
        }
    }

    func testAcceptAndPeerCredentials() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/link.sock"
            let listener = try UnixSocket.listen(path: path)
            defer { UnixSocket.close(listener) }
            XCTAssertNil(try UnixSocket.accept(listener), "nothing pending")

            let client = try UnixSocket.connect(path: path)
            defer { UnixSocket.close(client) }
            XCTAssertTrue(isNonBlocking(client))
            XCTAssertTrue(isCloseOnExec(client))
            guard let server = try UnixSocket.accept(listener) else { return XCTFail("no connection") }
            defer { UnixSocket.close(server) }
            XCTAssertTrue(isNonBlocking(server))
            XCTAssertTrue(isCloseOnExec(server))
            XCTAssertNil(try UnixSocket.accept(listener))

            let credentials = try UnixSocket.peerCredentials(server)
            XCTAssertEqual(credentials.uid, getuid())
            XCTAssertEqual(credentials.gid, getgid())
            XCTAssertEqual(credentials.pid, getpid())
            XCTAssertEqual(try UnixSocket.peerCredentials(client).uid, geteuid())
        }
    }

    func testSocketPairIsConnectedAndNonBlocking() throws {
        let (a, b) = try UnixSocket.socketPair()
        defer { UnixSocket.close(a); UnixSocket.close(b) }
        XCTAssertTrue(isNonBlocking(a) && isNonBlocking(b))
        XCTAssertEqual(try UnixSocket.peerCredentials(a).uid, getuid())
        XCTAssertEqual(writeRaw(a, [7]), 1)
        var byte: UInt8 = 0
        XCTAssertEqual(read(b, &byte, 1), 1)
        XCTAssertEqual(byte, 7)
        XCTAssertEqual(read(b, &byte, 1), -1, "non-blocking: nothing to read")
    }

    func testListenerServesConnectionsThroughTheLoop() throws {
        try withTemporaryDirectory { directory in
            for backend in availableBackends {
                let path = directory + "/\(backend).sock"
                let loop = try EventLoop(backend: backend)
                let listener = try UnixSocket.listen(path: path)
                var served: [Connection] = []
                try loop.watch(listener, events: .readable) { _ in
                    while let fd = try? UnixSocket.accept(listener) {
                        guard let connection = try? Connection(loop: loop, fd: fd) else { continue }
                        connection.onRead = { connection.write($0) }
                        served.append(connection)
                    }
                }
                let client = try Connection(loop: loop, fd: try UnixSocket.connect(path: path))
                var reply: [UInt8] = []
                client.onRead = { bytes in
                    reply.append(contentsOf: bytes)
                    if reply.count == 5 { loop.stop() }
                }
                client.write(Array("hello".utf8))
                try runLoop(loop, "\(backend)")
                XCTAssertEqual(String(decoding: reply, as: UTF8.self), "hello")
                client.close()
                served.forEach { $0.close() }
                loop.unwatch(listener)
                UnixSocket.close(listener)
                UnixSocket.removeSocketFile(path)
                XCTAssertFalse(FileSystem.fileExists(path))
            }
        }
    }
}

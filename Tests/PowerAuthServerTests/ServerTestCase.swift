import Foundation
import LinkCrypto
import PowerAuthServer
import XCTest

/// A test case with an emulated server over a store of its own in a temporary directory,
/// removed at the end.
class ServerTestCase: XCTestCase {
    private(set) var directory = ""
    var store: ServerStore!
    var server: EmulatedServer!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "pas-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = try ServerStore(path: directory + "/server.db")
        server = EmulatedServer(store: store)
    }

    /// A record made by the key exchange with a fresh device key.
    func activate(committed: Bool) throws -> ServerActivation {
        try server.prepareActivation(devicePublicKey: P256PrivateKey().publicKey.compressedRepresentation, committed: committed)
    }

    override func tearDown() {
        store.close()
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }
}

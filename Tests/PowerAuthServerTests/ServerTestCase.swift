import Foundation
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

    override func tearDown() {
        store.close()
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }
}

import Foundation
import LinkStore
import PowerAuthServer
@testable import PowerAuthSync
import XCTest

final class PowerAuthStoreTests: XCTestCase {
    private var directory = ""
    private var path: String { directory + "/powerauth.db" }

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "pas-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func token(_ name: String, activation: String? = "ACT", factors: Int = 1) -> StoredToken {
        StoredToken(
            instanceId: "main",
            data: PowerAuthTokenData(
                name: name, identifier: "id-\(name)", activationId: activation,
                authenticationFactors: factors, secret: Array(repeating: 7, count: 16)))
    }

    func testActivationAndTokensSurviveReopening() throws {
        var store = try PowerAuthStore(path: path)
        XCTAssertNil(try store.activationId(instanceId: "main"))
        try store.setActivationId("ACT", instanceId: "main", removingTokens: false)
        try store.saveToken(token("a", factors: 0x11))
        try store.saveToken(token("b"))
        store.close()
        store = try PowerAuthStore(path: path)
        defer { store.close() }
        XCTAssertEqual(try store.activationId(instanceId: "main"), "ACT")
        XCTAssertEqual(try store.tokens(instanceId: "main"), [token("a", factors: 0x11), token("b")])
        XCTAssertEqual(try store.token(instanceId: "main", name: "a")?.data.authenticationFactors, 0x11)
        XCTAssertNil(try store.token(instanceId: "other", name: "a"), "tokens belong to their instance")
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)
        XCTAssertEqual(mode.intValue & 0o777, 0o600, "secrets live here")
    }

    func testRemovalOfTokens() throws {
        let store = try PowerAuthStore(path: path)
        defer { store.close() }
        try store.setActivationId("ACT", instanceId: "main", removingTokens: false)
        for name in ["a", "b", "c"] { try store.saveToken(token(name)) }
        XCTAssertTrue(try store.removeToken(instanceId: "main", name: "a"))
        XCTAssertFalse(try store.removeToken(instanceId: "main", name: "a"), "already gone")
        XCTAssertEqual(try store.removeAllTokens(instanceId: "main"), 2)
        for name in ["a", "b"] { try store.saveToken(token(name)) }
        XCTAssertEqual(
            try store.setActivationId("NEW", instanceId: "main", removingTokens: true), 2,
            "a new activation wipes the tokens in the same transaction")
        XCTAssertEqual(try store.tokens(instanceId: "main").count, 0)
        XCTAssertEqual(try store.setActivationId(nil, instanceId: "main", removingTokens: true), 0)
        XCTAssertNil(try store.activationId(instanceId: "main"))
    }

    func testClientCounterRoundTrip() throws {
        let store = try PowerAuthStore(path: path)
        defer { store.close() }
        let counter = ClientCounter(masterSecret: Array(1...16), counterData: Array(0..<16), counterByte: 255)
        try store.setClientCounter(counter, instanceId: "main")
        XCTAssertEqual(try store.clientCounter(instanceId: "main"), counter)
        let withoutByte = ClientCounter(masterSecret: Array(1...16), counterData: Array(0..<16), counterByte: nil)
        try store.setClientCounter(withoutByte, instanceId: "main")
        XCTAssertEqual(try store.clientCounter(instanceId: "main")?.counterByte, nil)
        try store.setClientCounter(nil, instanceId: "main")
        XCTAssertNil(try store.clientCounter(instanceId: "main"))
    }

    func testADamagedCounterIsAnErrorNotACrash() throws {
        let store = try PowerAuthStore(path: path)
        try store.setClientCounter(ClientCounter(masterSecret: Array(1...16), counterData: Array(0..<16), counterByte: 0), instanceId: "main")
        store.close()
        let database = try SQLiteDatabase(path: path)
        try database.run("UPDATE client_counters SET master_secret = zeroblob(3)")
        database.close()
        let reopened = try PowerAuthStore(path: path)
        defer { reopened.close() }
        XCTAssertThrowsError(try reopened.clientCounter(instanceId: "main")) { error in
            XCTAssertTrue("\(error)".contains("instance 'main' is damaged"), "\(error)")
        }
    }

    /// A file of schema version 2 (a transport key and history, which no real SDK keeps)
    /// opens: its counters are dropped, its activations and tokens kept (with unknown factors).
    func testAVersion2FileOpens() throws {
        let version2 = StoreSchema(
            name: "WatchLink PowerAuth", applicationID: PowerAuthStore.applicationID,
            migrations: [
                Migration(
                    version: 1,
                    sql: """
                        CREATE TABLE activations (instance_id TEXT PRIMARY KEY NOT NULL, activation_id TEXT NOT NULL) WITHOUT ROWID;
                        CREATE TABLE tokens (instance_id TEXT NOT NULL, name TEXT NOT NULL, token_id TEXT NOT NULL, activation_id TEXT,
                                             secret BLOB NOT NULL, PRIMARY KEY (instance_id, name)) WITHOUT ROWID;
                        """),
                Migration(
                    version: 2,
                    sql: """
                        CREATE TABLE client_counters (instance_id TEXT PRIMARY KEY NOT NULL, transport_key BLOB NOT NULL,
                                                      counter_data BLOB NOT NULL, counter INTEGER NOT NULL, history BLOB NOT NULL) WITHOUT ROWID;
                        """),
            ])
        let old = try StoreFile.open(path: path, schema: version2).database
        try old.run("INSERT INTO activations VALUES ('main', 'ACT')")
        try old.run("INSERT INTO tokens VALUES ('main', 'a', 'id-a', 'ACT', zeroblob(16))")
        try old.run("INSERT INTO client_counters VALUES ('main', zeroblob(16), zeroblob(16), 3, x'')")
        old.close()
        let store = try PowerAuthStore(path: path)
        defer { store.close() }
        XCTAssertNil(try store.clientCounter(instanceId: "main"))
        XCTAssertEqual(try store.activationId(instanceId: "main"), "ACT")
        XCTAssertEqual(try store.token(instanceId: "main", name: "a")?.data.authenticationFactors, 0)
    }
}

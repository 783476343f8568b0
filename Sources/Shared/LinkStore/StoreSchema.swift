/// What a store file must be: whose it is and how its schema is built, version by version.
public struct StoreSchema: Sendable {
    /// The application's name in error messages ("… is not a WatchLink database").
    public let name: String
    /// The `PRAGMA application_id` that marks a file as this application's.
    public let applicationID: Int32
    /// The steps in order, versions 1, 2, 3, … without gaps.
    public let migrations: [Migration]

    /// The schema version this code builds: the last migration's version.
    public var version: Int { migrations.last?.version ?? 0 }

    /// - Precondition: `applicationID` is not 0, and the migrations are numbered 1, 2, 3, …
    public init(name: String = "WatchLink", applicationID: Int32, migrations: [Migration]) {
        precondition(applicationID != 0, "application_id 0 is what every new SQLite file has")
        for (offset, migration) in migrations.enumerated() {
            precondition(
                migration.version == offset + 1,
                "migration \(offset + 1) has version \(migration.version); versions must run 1, 2, 3, …")
        }
        self.name = name
        self.applicationID = applicationID
        self.migrations = migrations
    }
}

/// One step of a store's schema: the change that brings the schema from `version - 1` to
/// `version`.
public struct Migration: Sendable {
    /// The schema version after this step; the first step is version 1.
    public let version: Int
    let apply: @Sendable (SQLiteDatabase) throws -> Void

    /// A step made of SQL statements, run with ``SQLiteDatabase/execute(_:)``.
    public init(version: Int, sql: String) {
        self.version = version
        self.apply = { try $0.execute(sql) }
    }

    /// A step made of code, for changes SQL alone cannot express (copying data through a
    /// transformation, for instance).
    public init(version: Int, apply: @escaping @Sendable (SQLiteDatabase) throws -> Void) {
        self.version = version
        self.apply = apply
    }
}

/// What a peer's turns need of its store: the durable operations of one turn as one
/// transaction, and the committed state read back. ``DeliveryStore`` is the one the daemons
/// use; the simulator puts a model with crash and disk-fault semantics in its place.
package protocol DurableStore: AnyObject {
    /// Whether a turn's transaction is open.
    var inTransaction: Bool { get }
    /// Performs `operation` in the current turn's transaction, opening one if none is open.
    func apply(_ operation: DurableOperation) throws(SQLiteError)
    /// Makes the turn's operations durable; on a failure the turn must be rolled back.
    func commit() throws(SQLiteError)
    /// Discards the turn's operations.
    func rollback()
    /// The committed state.
    func load() throws(SQLiteError) -> DurableState
    /// Received items already handed to the app, oldest first, with `seq` above `after`.
    func deliveredItems(after seq: UInt64, limit: Int) throws(SQLiteError) -> [InboxItem]
    /// Forgets delivered items but the newest `count`.
    func pruneDelivered(keeping count: Int) throws(SQLiteError)
    /// Closes the store; later calls fail.
    func close()
}

extension DeliveryStore: DurableStore {}

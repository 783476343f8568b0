/// The SDK instances that exist, in registration order, in memory as an app creates its SDK
/// objects at launch: registered by a script (`pa.instance.add`, until `pa.instance.remove`) or
/// by an app process's SDK object (`"whileConnected": true`: until its connection closes).
final class InstanceRegistry {
    private struct Entry {
        var id: String
        /// Set while only connections registered it: their serials.
        var connections: Set<UInt64>?
    }

    private var entries: [Entry] = []

    var ids: [String] { entries.map(\.id) }

    func contains(_ instanceId: String) -> Bool { entries.contains { $0.id == instanceId } }

    /// False when it was registered already. With `connection`, the registration lasts while
    /// that control connection is open; a script's lasts until it is removed.
    func add(_ instanceId: String, connection: UInt64? = nil) -> Bool {
        guard let index = entries.firstIndex(where: { $0.id == instanceId }) else {
            entries.append(Entry(id: instanceId, connections: connection.map { [$0] }))
            return true
        }
        if let connection { entries[index].connections?.insert(connection) } else { entries[index].connections = nil }
        return false
    }

    /// False when it was not registered.
    func remove(_ instanceId: String) -> Bool {
        guard let index = entries.firstIndex(where: { $0.id == instanceId }) else { return false }
        entries.remove(at: index)
        return true
    }

    /// The connection's registration ends (its SDK object is gone); a script's, or another
    /// connection's, stays. False when the connection had not registered it.
    func release(_ instanceId: String, connection: UInt64) -> Bool {
        guard let index = entries.firstIndex(where: { $0.id == instanceId }),
            var connections = entries[index].connections, connections.remove(connection) != nil
        else { return false }
        if connections.isEmpty { entries.remove(at: index) } else { entries[index].connections = connections }
        return true
    }

    /// The connection closed: what only it registered is gone.
    func connectionClosed(_ serial: UInt64) {
        for index in entries.indices.reversed() {
            guard var connections = entries[index].connections, connections.remove(serial) != nil else { continue }
            if connections.isEmpty { entries.remove(at: index) } else { entries[index].connections = connections }
        }
    }
}

/// The SDK instances an app registered, in registration order (in memory: an app creates
/// them at launch).
final class InstanceRegistry {
    private(set) var ids: [String] = []

    func contains(_ instanceId: String) -> Bool { ids.contains(instanceId) }

    /// False when it was registered already.
    func add(_ instanceId: String) -> Bool {
        guard !ids.contains(instanceId) else { return false }
        ids.append(instanceId)
        return true
    }

    /// False when it was not registered.
    func remove(_ instanceId: String) -> Bool {
        guard let index = ids.firstIndex(of: instanceId) else { return false }
        ids.remove(at: index)
        return true
    }
}

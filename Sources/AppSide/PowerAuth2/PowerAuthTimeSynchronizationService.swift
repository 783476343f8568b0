import Dispatch
import Foundation
import LinkJSON

/// The time synchronised with the PowerAuth server, as the SDK's service keeps it for an SDK
/// object (the device's daemon keeps it for the instance: `pa.time.*`).
public protocol PowerAuthTimeSynchronizationService: AnyObject {
    /// Whether the time has been synchronised with the server.
    var isTimeSynchronized: Bool { get }
    /// Server time minus local time, in seconds.
    var localTimeAdjustment: TimeInterval { get }
    /// How far the synchronised time may be from the server's, in seconds.
    var localTimeAdjustmentPrecision: TimeInterval { get }
    /// The synchronised time now, seconds since 1970 (the local time before synchronisation).
    @discardableResult
    func currentTime() -> TimeInterval
    /// Takes a sample of the server's time; `callback` runs on `callbackQueue` (main when nil).
    @discardableResult
    func synchronizeTime(callback: @escaping (Error?) -> Void, callbackQueue: DispatchQueue?) -> PowerAuthOperationTask?
    /// Forgets the synchronisation (the SDK does it when the app enters the foreground).
    func resetTimeSynchronization()
}

/// The service of one SDK object.
final class DeviceTimeSynchronization: PowerAuthTimeSynchronizationService, @unchecked Sendable {
    private let instanceId: String
    private let device: PowerAuthDevice

    init(instanceId: String, device: PowerAuthDevice) {
        self.instanceId = instanceId
        self.device = device
    }

    private var instance: JSONObject { ["instanceId": .string(instanceId)] }

    private func current() -> JSONObject? {
        switch device.call("pa.time.current", instance) {
        case .success(let answer): return answer
        case .failure(let error):
            device.log("timeSynchronizationService: \(error.localizedDescription)")
            return nil
        }
    }

    var isTimeSynchronized: Bool { current()?["isTimeSynchronized"]?.boolValue ?? false }

    var localTimeAdjustment: TimeInterval { Double(current()?["adjustmentMs"]?.intValue ?? 0) / 1000 }

    var localTimeAdjustmentPrecision: TimeInterval { Double(current()?["precisionMs"]?.intValue ?? 0) / 1000 }

    func currentTime() -> TimeInterval {
        guard let milliseconds = current()?["time"]?.intValue else { return Date().timeIntervalSince1970 }
        return Double(milliseconds) / 1000
    }

    @discardableResult
    func synchronizeTime(callback: @escaping (Error?) -> Void, callbackQueue: DispatchQueue?) -> PowerAuthOperationTask? {
        let task = CancellableTask()
        device.send("pa.time.sync", instance) { result in
            (callbackQueue ?? .main).asyncCompletion {
                guard !task.isCancelled else { return }
                switch result {
                case .success: callback(nil)
                case .failure(let error): callback(error)
                }
            }
        }
        return task
    }

    func resetTimeSynchronization() {
        if case .failure(let error) = device.call("pa.time.reset", instance) {
            device.log("resetTimeSynchronization(): \(error.localizedDescription)")
        }
    }
}

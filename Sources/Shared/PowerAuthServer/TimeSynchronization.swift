/// The SDK's time synchronisation service (`PA2TimeSynchronizationService`): it learns the
/// difference between the server's clock and the local one from the server time in responses.
/// All times are Unix milliseconds.
public struct TimeSynchronization: Hashable, Sendable {
    /// `MAX_ACCEPTED_ELAPSED_TIME`: a sample whose request took longer is discarded.
    public static let maximumElapsedMilliseconds: Int64 = 16_000
    /// `MIN_ACCEPTED_TIME_DIFFERENCE`: a difference below this counts as no difference…
    public static let minimumDifferenceMilliseconds: Int64 = 2_000
    /// `MIN_TIME_DIFFERENCE_DELTA`: …provided it is this close to the current adjustment; a
    /// synchronised service also keeps its adjustment for any sample this close to it.
    public static let minimumDeltaMilliseconds: Int64 = 10_000

    /// What a sample did.
    public enum Outcome: Hashable, Sendable {
        /// The difference is too small to matter: synchronised, adjustment left as it was.
        case synchronized
        /// Already synchronised and the sample is close to the adjustment: nothing changed.
        case kept
        /// The adjustment became the sample's difference.
        case adjusted
        /// The request took over 16 s: the sample is ignored, the state stays as it was.
        case discarded(elapsed: Int64)
        /// The request ended before it started: a broken sample.
        case failed

        /// The SDK's return value: whether the time counts as synchronised afterwards.
        public func succeeded(wasSynchronized: Bool) -> Bool {
            switch self {
            case .synchronized, .kept, .adjusted: return true
            case .discarded: return wasSynchronized
            case .failed: return false
            }
        }
    }

    /// Server time minus local time; 0 until a sample set it.
    public private(set) var adjustment: Int64 = 0
    /// Half the elapsed time of the sample that last synchronised.
    public private(set) var precision: Int64 = 0
    public private(set) var isSynchronized = false

    public init() {}

    /// `completeTimeSynchronizationTask`: `startedAt` and `now` are local times around the
    /// request; the server is taken to have answered half-way through.
    @discardableResult
    public mutating func processSample(serverTime: Int64, startedAt: Int64, now: Int64) -> Outcome {
        let elapsed = now - startedAt
        guard elapsed >= 0 else { return .failed }
        guard elapsed <= Self.maximumElapsedMilliseconds else { return .discarded(elapsed: elapsed) }
        let halfElapsed = elapsed / 2
        let difference = serverTime + halfElapsed - now
        let deltaIsSmall = abs(adjustment - difference) < Self.minimumDeltaMilliseconds
        if abs(difference) < Self.minimumDifferenceMilliseconds && deltaIsSmall {
            isSynchronized = true
            precision = halfElapsed
            return .synchronized
        }
        if isSynchronized && deltaIsSmall { return .kept }
        adjustment = difference
        isSynchronized = true
        precision = halfElapsed
        return .adjusted
    }

    /// The synchronised time now: local time plus the adjustment.
    public func currentTime(localTime: Int64) -> Int64 { localTime + adjustment }

    /// `resetTimeSynchronization` (also on `UIApplicationWillEnterForegroundNotification`).
    public mutating func reset() {
        adjustment = 0
        precision = 0
        isSynchronized = false
    }
}

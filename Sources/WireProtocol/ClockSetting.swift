/// What a CLOCK_SET frame says of the phone's device clock (docs/wire-protocol.md).
public struct ClockSetting: Sendable, Hashable {
    /// The phone's number of this round of its clock: the watch's CLOCK_ACK names it.
    public var round: UInt64
    /// Whether the phone's clock is manual (it moves only when a test moves it); else it is
    /// the system's and the watch uses the system's too.
    public var isManual: Bool
    /// The phone's device monotonic time, in milliseconds: at most `Int64.max`.
    public var monotonicMilliseconds: UInt64
    /// The phone's device wall-clock time, in milliseconds since 1970: at most
    /// ``maximumWallMilliseconds``.
    public var wallMilliseconds: UInt64

    /// 9999-12-31T23:59:59.999Z, the last instant an ISO 8601 date of four digits names.
    public static let maximumWallMilliseconds: UInt64 = 253_402_300_799_999

    public init(round: UInt64, isManual: Bool, monotonicMilliseconds: UInt64, wallMilliseconds: UInt64) {
        self.round = round
        self.isManual = isManual
        self.monotonicMilliseconds = monotonicMilliseconds
        self.wallMilliseconds = wallMilliseconds
    }
}

/// The counter behind `received.list`'s `seq`.
///
/// phoned keeps one session per paired watch; they share one counter, so that a `seq` (and a
/// `replyId`, which is one) names one received item of the phone whatever watch sent it. Each
/// session still reserves the numbers it hands out in its own store, so a restart, which
/// starts the counter above every store's reservation, never repeats one.
public final class ReceivedSequence {
    /// The next number to hand out.
    public internal(set) var next: UInt64 = 1

    public init() {}
}

@available(*, unavailable)
extension ReceivedSequence: Sendable {}

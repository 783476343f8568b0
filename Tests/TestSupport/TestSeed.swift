import Foundation

/// The seed of a randomised test: `WATCHLINK_SEED` when it is set (to replay a failure), else
/// `fallback`. Printed with the test's name, so every run says which seed it used; put the seed
/// in the failure messages too.
public func testSeed(default fallback: UInt64, test: String = #function) -> UInt64 {
    let seed = ProcessInfo.processInfo.environment["WATCHLINK_SEED"].flatMap { UInt64($0) } ?? fallback
    print("\(test): seed \(seed) (WATCHLINK_SEED=\(seed) replays it)")
    return seed
}

/// The seeds of a test that runs several: only `WATCHLINK_SEED` when it is set, else `fallback`.
public func testSeeds(default fallback: ClosedRange<UInt64>, test: String = #function) -> [UInt64] {
    if let seed = ProcessInfo.processInfo.environment["WATCHLINK_SEED"].flatMap({ UInt64($0) }) {
        print("\(test): seed \(seed) from WATCHLINK_SEED")
        return [seed]
    }
    print("\(test): seeds \(fallback.lowerBound)...\(fallback.upperBound) (WATCHLINK_SEED=N replays one)")
    return Array(fallback)
}

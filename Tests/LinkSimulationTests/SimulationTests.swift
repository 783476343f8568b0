import LinkSimulation
import XCTest

/// A few worlds of the simulator in the suite (the bulk runs in scripts/simulate.sh).
final class SimulationTests: XCTestCase {
    func testSeedsPass() {
        for seed in UInt64(1)...20 {
            let failures = SimWorld(seed: seed).run()
            XCTAssertEqual(failures, [], "seed \(seed); replay: scripts/simulate.sh --seed \(seed)")
        }
    }

    func testASeedRunsTheSameTwice() {
        for seed in UInt64(100)...104 {
            let first = SimWorld(seed: seed)
            _ = first.run()
            let second = SimWorld(seed: seed)
            _ = second.run()
            XCTAssertEqual(first.hash, second.hash, "seed \(seed)")
            XCTAssertGreaterThan(first.steps, 0)
        }
    }
}

import XCTest
@testable import PowerAuthServer

/// `EmulatedNetwork.delivers(random:)`: a network that is down loses every request; one that
/// is up loses exactly the share `failRate` of the unit interval, the draws below it.
final class EmulatedNetworkTests: XCTestCase {
    func testTheDefaultNetworkIsUpWithoutLatencyAndDeliversEverything() {
        let network = EmulatedNetwork()
        XCTAssertTrue(network.isUp)
        XCTAssertEqual(network.latencyMilliseconds, 0)
        XCTAssertEqual(network.failRate, 0)
        for random in [0.0, 0.25, 0.5, 0.999_999] {
            XCTAssertTrue(network.delivers(random: random), "draw \(random)")
        }
    }

    func testANetworkThatIsDownDeliversNothingWhateverTheDraw() {
        let network = EmulatedNetwork(isUp: false)
        for random in [0.0, 0.25, 0.5, 0.999_999] {
            XCTAssertFalse(network.delivers(random: random), "draw \(random)")
        }
    }

    func testAFailRateLosesTheDrawsBelowItAndDeliversTheRest() {
        let network = EmulatedNetwork(failRate: 0.25)
        XCTAssertFalse(network.delivers(random: 0))
        XCTAssertFalse(network.delivers(random: 0.249_999))
        XCTAssertTrue(network.delivers(random: 0.25), "the boundary draw is delivered: lost means below the rate")
        XCTAssertTrue(network.delivers(random: 0.999_999))
    }

    func testTheExtremeRates() {
        let lossless = EmulatedNetwork(failRate: 0)
        XCTAssertTrue(lossless.delivers(random: 0), "a rate of 0 loses nothing, not even the draw 0")
        let lossy = EmulatedNetwork(failRate: 1)
        XCTAssertFalse(lossy.delivers(random: 0.999_999), "a rate of 1 loses every draw in 0..<1")
    }

    func testOverASpreadOfDrawsTheLostShareIsTheRate() {
        let network = EmulatedNetwork(failRate: 0.3)
        let draws = (0..<1000).map { Double($0) / 1000 }
        XCTAssertEqual(draws.filter { !network.delivers(random: $0) }.count, 300)
    }
}

import Foundation
import LinkClient
import LinkControl
import LinkJSON
import XCTest

/// `weather.set` and `status.weather` on the real daemons (docs/control-protocol.md).
final class WeatherOperationTests: DaemonTestCase {
    func testTheWeatherIsCalmUntilSetAndADrawnSeedIsAnsweredAndLogged() throws {
        let (phone, _, p, w) = try startActivatedPair()
        let calm = try XCTUnwrap(try p.call("status")["weather"]?.objectValue)
        XCTAssertEqual(calm["profile"], "calm")
        XCTAssertEqual(calm["isReachableInFact"], true)
        XCTAssertEqual(calm["spell"], .null)

        let set = try p.call("weather.set", ["profile": "device"])
        XCTAssertEqual(set["profile"], "device")
        let seed = try XCTUnwrap(set["seed"]?.intValue, "a drawn seed is answered")
        eventually("the seed in the log") { phone.log.contains("weather: device, seed \(seed) (replay with --weather device --weather-seed \(seed))") }
        XCTAssertEqual(try p.call("status")[path: "weather", "seed"], .int(seed))

        let watchSet = try w.call("weather.set", ["profile": "device", "seed": 2_217])
        XCTAssertEqual(watchSet["seed"], 2_217)
        XCTAssertEqual(try w.call("weather.set", ["profile": "calm"])["profile"], "calm")
        XCTAssertEqual(try w.call("status")["isReachable"], true, "calm tells the app the fact at once")
    }

    func testBadWeatherIsRefusedByName() throws {
        let (_, _, p, _) = try startActivatedPair()
        for (args, words) in [
            (["profile": "stormy"] as JSONObject, "'profile' must be calm or device; got 'stormy'"),
            (["profile": "calm", "seed": 3], "'seed' seeds the device weather"),
            (["profile": "device", "seed": -1], "seed"),
            ([:], "profile"),
        ] {
            do {
                _ = try p.call("weather.set", args)
                XCTFail("\(args) is refused")
            } catch let error as ControlError {
                XCTAssertEqual(error.code, 3, "\(error)")
                XCTAssertTrue(error.message.contains(words), error.message)
            }
        }
        XCTAssertEqual(try p.call("status")[path: "weather", "profile"], "calm", "nothing changed, the daemon serves on")
    }
}

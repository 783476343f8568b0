import LinkControl
import LinkJSON
import LinkSession

/// The weather's op: how reachability behaves from now on (ReachabilityWeather.swift).
struct WeatherOperations {
    let context: FeatureContext
    let directory: PeerDirectory

    var operations: [ControlOperation] {
        [
            ControlOperation(
                "weather.set",
                summary: "how reachability behaves: calm (every change at once) or device (lags, coalesced flips, wrist-down spells), from a seed",
                arguments: [
                    .required("profile", .string, "calm or device"),
                    .optional("seed", .integer(0...Int64.max), "the device weather's seed (default: drawn and answered)"),
                ]
            ) { call in
                let name = try call.args.string("profile")
                guard let profile = ReachabilityWeather.Profile(rawValue: name) else {
                    throw call.args.invalid("'profile' must be calm or device; got '\(name)'")
                }
                let given = try call.args.optionalInt("seed", range: 0...Int64.max)
                if given != nil, profile == .calm {
                    throw call.args.invalid("'seed' seeds the device weather; the calm one draws nothing")
                }
                let seed = given.map(UInt64.init) ?? (profile == .calm ? 0 : UInt64.random(in: 0...UInt64(Int64.max)))
                directory.setWeather(ReachabilityWeather(profile: profile, seed: seed, role: context.role))
                if profile == .device {
                    context.logger.info("weather: device, seed \(seed) (replay with --weather device --weather-seed \(seed))")
                } else {
                    context.logger.info("weather: calm")
                }
                call.succeed(ControlRendering.render(directory.session.weatherStatus(now: context.loop.turnMilliseconds)))
            }
        ]
    }
}

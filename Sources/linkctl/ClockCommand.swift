import Foundation
import LinkClient
import LinkControl
import LinkJSON

/// `linkctl clock`: the pair's device clock (docs/control-protocol.md, "The device clock").
struct ClockInvocation: Equatable {
    enum Action: Equatable {
        /// Both daemons' clocks.
        case show
        /// `clock.advance` on the phone.
        case advance(milliseconds: Int64)
        /// `clock.set` on the phone.
        case set(time: String)
    }

    var action: Action
    var home: String?
    var timeoutSeconds = 10.0
}

enum ClockCommand {
    /// A duration as people write it: `500ms`, `90s`, `15m`, `1h`, `1d`, and sums such as
    /// `1h30m`; a bare number is milliseconds. Nil when it is none of these.
    static func milliseconds(_ text: String) -> Int64? {
        if let plain = Int64(text) { return plain >= 0 ? plain : nil }
        let units: [(String, Int64)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        var rest = Substring(text)
        var total: Int64 = 0
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let count = Int64(digits) else { return nil }
            rest = rest.dropFirst(digits.count)
            // `ms` is tried before `m`.
            guard let (unit, factor) = units.first(where: { rest.hasPrefix($0.0) }) else { return nil }
            rest = rest.dropFirst(unit.count)
            let (product, overflow) = count.multipliedReportingOverflow(by: factor)
            guard !overflow, total <= Int64.max - product else { return nil }
            total += product
        }
        return total
    }

    static func run(_ invocation: ClockInvocation) -> Never {
        let home = invocation.home ?? WatchLinkHome.defaultPath()
        let phonePath = WatchLinkHome.path(WatchLinkHome.phoneControlSocketName, in: home)
        switch invocation.action {
        case .show:
            var clocks: JSONObject = [:]
            for (side, name) in [("phone", WatchLinkHome.phoneControlSocketName), ("watch", WatchLinkHome.watchControlSocketName)] {
                let path = WatchLinkHome.path(name, in: home)
                guard let client = try? ControlClient(socketPath: path, timeoutSeconds: invocation.timeoutSeconds) else {
                    if side == "phone" { fail(.cannotConnect, "nothing answers at \(path)") }
                    clocks[side] = .null
                    continue
                }
                do { clocks[side] = try client.call("status")["clock"] ?? .null } catch { failure(error) }
                client.close()
            }
            writeStandardOutput(JSON.serialize(.object(clocks)) + "\n")
        case .advance(let milliseconds):
            call(phonePath, "clock.advance", ["ms": .int(milliseconds)], invocation.timeoutSeconds)
        case .set(let time):
            call(phonePath, "clock.set", ["time": .string(time)], invocation.timeoutSeconds)
        }
        exit(ExitStatus.success.rawValue)
    }

    private static func call(_ path: String, _ op: String, _ args: JSONObject, _ timeout: Double) {
        let client: ControlClient
        do { client = try ControlClient(socketPath: path, timeoutSeconds: timeout) } catch { fail(.cannotConnect, "\(error)") }
        do {
            writeStandardOutput(JSON.serialize(.object(try client.call(op, args))) + "\n")
        } catch {
            failure(error)
        }
        client.close()
    }
}

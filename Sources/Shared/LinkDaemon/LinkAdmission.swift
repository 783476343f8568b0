import LinkSession
import WireProtocol

/// Whether a counterpart that proved the pairing key may link: watchd links with one phone;
/// phoned with each paired watch once, and pairs new ones while there is room.
enum LinkAdmission {
    /// What the daemon knows when a HELLO arrives.
    struct Situation {
        var role: Role
        /// watchd: the phone it is linked with.
        var linkedPhone: String?
        /// phoned: the watches that have a link now.
        var linkedWatches: Set<String>
        /// phoned: the paired watches.
        var pairedWatches: Set<String>
        /// phoned: its clock is manual, which a watch follows only from protocol version
        /// ``LinkProtocol/clockVersion`` on.
        var clockIsManual = false
    }

    /// nil to admit, else the GOAWAY to refuse with.
    static func refusal(of hello: Hello, in situation: Situation) -> (GoAwayCode, String)? {
        guard situation.role == .phone else {
            if let current = situation.linkedPhone {
                return (.alreadyConnected, "the watch is linked with phone '\(current)' already; refused phone '\(hello.deviceId)'")
            }
            return nil
        }
        if situation.linkedWatches.contains(hello.deviceId) {
            return (.alreadyConnected, "the phone is linked with watch '\(hello.deviceId)' already; refused a second link from it")
        }
        if !situation.pairedWatches.contains(hello.deviceId), situation.pairedWatches.count >= PairedWatches.maximumCount {
            return (
                .alreadyConnected,
                "the phone has \(PairedWatches.maximumCount) watches paired, as many as it keeps; refused watch '\(hello.deviceId)'"
            )
        }
        if situation.clockIsManual, hello.maxVersion < LinkProtocol.clockVersion {
            return (
                .versionMismatch,
                "the phone runs a manual clock (phoned --clock manual), which a watch follows from link protocol version \(LinkProtocol.clockVersion) on; watch '\(hello.deviceId)' speaks \(hello.minVersion)...\(hello.maxVersion): run a watchd of this release"
            )
        }
        return nil
    }
}

/// The two APNs endpoints phoned runs: development (the sandbox) and production, each its own
/// port; a connection is of the environment of the port it reached.
struct APNsEndpoints {
    let development: APNsServer
    let production: APNsServer

    var all: [APNsServer] { [development, production] }

    /// GOAWAY on every connection of both; how many got it.
    func goAwayAll(errorCode: UInt32, message: String) -> Int {
        all.reduce(0) { $0 + $1.goAwayAll(errorCode: errorCode, message: message) }
    }
}

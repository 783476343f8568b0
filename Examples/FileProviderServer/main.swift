import Foundation
import WatchLinkTesting

// The File Provider app's server, as a provider of APNs: it takes the device token the app
// sent it (a file in its inbox), and announces a change of a container with a `fileprovider`
// push to phoned's APNs endpoint (HTTP/2 over TLS, an ES256 provider token), then exits: 0
// when APNs accepted the push.
//
//   --control PATH       phoned's control socket (to set up the app's ids and a signing key)
//   --inbox DIR          where the app sends its device token (DIR/device-token)
//   --container ID       the container that changed (default: the working set)
//   --domain NAME        its domain (default: main)

func option(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[index + 1]
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

guard let control = option("--control"), let inbox = option("--inbox") else {
    say("usage: WatchLinkExampleFileProviderServer --control PATH --inbox DIR [--container ID] [--domain NAME]")
    exit(2)
}

do {
    let provider = try WatchLinkPushProvider.configure(controlSocketPath: control)
    let tokenFile = URL(fileURLWithPath: inbox).appendingPathComponent("device-token")
    let deadline = Date().addingTimeInterval(30)
    var token: String?
    while token == nil {
        token = (try? String(contentsOf: tokenFile, encoding: .utf8)).flatMap { $0.isEmpty ? nil : $0 }
        if token == nil {
            guard Date() < deadline else { throw WatchLinkTestingError("no device token in \(tokenFile.path) within 30 s") }
            usleep(10_000)
        }
    }
    say("server: device token \(token!)")
    let container = option("--container") ?? "NSFileProviderWorkingSetContainerItemIdentifier"
    let response = try provider.sendFileProviderChange(container: container, domain: option("--domain") ?? "main", to: token!)
    say("server: APNs answered \(response)")
    exit(response.status == 200 ? 0 : 1)
} catch {
    say("server: \(error)")
    exit(1)
}

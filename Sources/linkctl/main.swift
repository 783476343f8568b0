import Foundation
import LinkClient
import LinkControl
import LinkJSON

let version = WatchLinkVersion.current

enum ExitStatus: Int32 {
    case success = 0
    case errorResponse = 1
    case usage = 2
    case cannotConnect = 3
    case transport = 4
}

func writeStandardOutput(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

func writeStandardError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}

func fail(_ status: ExitStatus, _ message: String) -> Never {
    writeStandardError("linkctl: \(message)\n")
    if status == .usage {
        writeStandardError("Try 'linkctl --help'.\n")
    }
    exit(status.rawValue)
}

func socketPath(for invocation: LinkctlInvocation) -> String {
    let home = invocation.home ?? WatchLinkHome.defaultPath()
    let name = invocation.device == .phone ? WatchLinkHome.phoneControlSocketName : WatchLinkHome.watchControlSocketName
    return WatchLinkHome.path(name, in: home)
}

func connect(_ invocation: LinkctlInvocation) -> ControlClient {
    do {
        return try ControlClient(socketPath: socketPath(for: invocation), timeoutSeconds: invocation.timeoutSeconds)
    } catch {
        fail(.cannotConnect, "\(error)")
    }
}

func arguments(of invocation: LinkctlInvocation) -> JSONObject {
    guard let text = invocation.argumentsJSON else { return [:] }
    let value: JSONValue
    do {
        value = try JSON.parse(text)
    } catch {
        fail(.usage, "--json is not valid JSON: \(error)")
    }
    guard case .object(let object) = value else {
        fail(.usage, "--json must be a JSON object, got \(value.typeName)")
    }
    return object
}

func failure(_ error: Error) -> Never {
    if let error = error as? ControlError {
        fail(.errorResponse, "\(error)")
    }
    fail(.transport, "\(error)")
}

func runCall(_ invocation: LinkctlInvocation) -> Never {
    let args = arguments(of: invocation)
    let client = connect(invocation)
    do {
        let result = try client.call(invocation.op, args)
        writeStandardOutput(JSON.serialize(.object(result)) + "\n")
    } catch {
        failure(error)
    }
    client.close()
    exit(ExitStatus.success.rawValue)
}

func runEvents(_ invocation: LinkctlInvocation) -> Never {
    let client = connect(invocation)
    do {
        try client.subscribe()
        while true {
            guard let event = try client.nextEvent(timeoutSeconds: 3600) else { continue }
            writeStandardOutput(JSON.serialize(event.json) + "\n")
        }
    } catch ControlClientError.connectionClosed {
        exit(ExitStatus.success.rawValue)
    } catch {
        failure(error)
    }
}

/// Prints a daemon's ops as its `ops.list` gives them: one line an op, then its arguments.
func runOpsHelp(_ invocation: LinkctlInvocation) -> Never {
    let client = connect(invocation)
    let listing: JSONObject
    do { listing = try client.call("ops.list") } catch { failure(error) }
    client.close()
    writeStandardOutput(OpsHelp.text(listing))
    exit(ExitStatus.success.rawValue)
}

let command: LinkctlCommand
do {
    command = try LinkctlCommand.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail(.usage, "\(error)")
}

switch command {
case .help:
    writeStandardOutput(LinkctlCommand.usage + "\n")
case .version:
    writeStandardOutput("linkctl \(version)\n")
case .call(let invocation):
    runCall(invocation)
case .ops(let invocation):
    runOpsHelp(invocation)
case .events(let invocation):
    runEvents(invocation)
case .trace(let invocation):
    TraceCommand.run(invocation)
case .clock(let invocation):
    ClockCommand.run(invocation)
}

/// What the command line asks `linkctl` to do.
enum LinkctlCommand: Equatable {
    case help
    case version
    case call(LinkctlInvocation)
    /// `linkctl phone --help`: the daemon's op table (`ops.list`), printed for people.
    case ops(LinkctlInvocation)
    case events(LinkctlInvocation)
    /// `linkctl trace`: both daemons' traces (or trace files), merged and drawn.
    case trace(TraceInvocation)
    /// `linkctl clock`: the pair's device clock, shown, advanced or set.
    case clock(ClockInvocation)

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    static let usage = """
        Usage:
          linkctl [--home DIR] [--timeout SECONDS] phone|watch OP [--json '{...}']
          linkctl [--home DIR] [--timeout SECONDS] phone|watch events
          linkctl [--home DIR] phone|watch --help
          linkctl [--home DIR] trace [--from SOCKET|FILE]... [--last N] [--html FILE] [--mermaid] [--follow]
          linkctl [--home DIR] [--timeout SECONDS] clock [advance DURATION | set TIME]
          linkctl --help | --version

        Sends one control request to phoned or watchd and prints its result as one JSON line.
        'events' subscribes and prints each event as one JSON line until interrupted or until
        the daemon closes the connection.

        'trace' reads the trace of phoned and watchd (trace.get on HOME/phone.ctl and
        HOME/watch.ctl, or the sockets and trace files given with --from), merges them by
        time and prints the entries as JSON lines; --html FILE writes a sequence diagram
        as one self-contained HTML page, --mermaid prints a Mermaid sequenceDiagram, and
        --follow prints the entries and then every new one as a two-column view until
        interrupted (docs/trace.md).

        'clock' prints the device clock of phoned and watchd; 'clock advance DURATION' moves
        the pair's manual clock ahead (phoned --clock manual; 500ms, 90s, 15m, 1h, 1d, 1h30m),
        firing the timers that fall due in order, and 'clock set TIME' sets it (ISO 8601, e.g.
        2026-12-31T23:59:00Z); both answer once every daemon of the pair shows the new time.

        Options:
          --home DIR          WatchLink home holding phone.ctl and watch.ctl (default:
                              $WATCHLINK_HOME, else $XDG_RUNTIME_DIR/watchlink,
                              else /tmp/watchlink-<uid>)
          --timeout SECONDS   time allowed for the answer (default 10)
          --json '{...}'      the operation's arguments, a JSON object (default {})
          --help              show this help; after phone or watch: that daemon's ops,
                              their arguments and what they do (its ops.list)
          --version           show the version
          --from PATH         trace: a control socket or a trace file to read (repeatable)
          --html FILE         trace: write the picture as an HTML page
          --mermaid           trace: print a Mermaid sequenceDiagram
          --follow            trace: a live two-column view in the terminal
          --width N           trace --follow: the width of the view (default 100)
          --last N            trace: only the newest N entries of the merged trace

        Exit status: 0 success, 1 the daemon answered with an error, 2 usage error,
        3 cannot connect, 4 no valid answer (timeout, connection lost).

        Examples:
          linkctl phone session.activate
          linkctl phone message.send --json '{"message": {"hello": "watch"}}'
          linkctl watch events
          linkctl clock advance 1h
        """

    /// Reads the arguments that follow the program name.
    static func parse(_ arguments: [String]) throws -> LinkctlCommand {
        var home: String?
        var timeout = 10.0
        var json: String?
        var positionals: [String] = []
        var wantsHelp = false
        var trace = TraceInvocation()
        var traceOptions: [String] = []
        var remaining = arguments[...]

        func value(of option: String, inline: String?) throws -> String {
            if let inline { return inline }
            guard let next = remaining.popFirst() else {
                throw UsageError(description: "option \(option) needs a value")
            }
            return next
        }

        while let argument = remaining.popFirst() {
            if argument == "--" {
                positionals.append(contentsOf: remaining)
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                positionals.append(argument)
                continue
            }
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let inline = parts.count == 2 ? String(parts[1]) : nil
            switch name {
            case "--help", "-h":
                wantsHelp = true
            case "--version":
                return .version
            case "--home":
                let directory = try value(of: name, inline: inline)
                guard !directory.isEmpty else { throw UsageError(description: "--home needs a directory") }
                home = directory
            case "--timeout":
                let text = try value(of: name, inline: inline)
                guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
                    throw UsageError(description: "--timeout needs a positive number of seconds, got '\(text)'")
                }
                timeout = seconds
            case "--json":
                json = try value(of: name, inline: inline)
            case "--from":
                trace.sources.append(try value(of: name, inline: inline))
                traceOptions.append(name)
            case "--html":
                trace.htmlPath = try value(of: name, inline: inline)
                traceOptions.append(name)
            case "--mermaid":
                trace.mermaid = true
                traceOptions.append(name)
            case "--follow":
                trace.follow = true
                traceOptions.append(name)
            case "--last":
                let text = try value(of: name, inline: inline)
                guard let count = Int(text), count > 0 else {
                    throw UsageError(description: "--last needs a positive number of entries, got '\(text)'")
                }
                trace.last = count
                traceOptions.append(name)
            case "--width":
                let text = try value(of: name, inline: inline)
                guard let width = Int(text), width >= 60, width <= 1000 else {
                    throw UsageError(description: "--width needs a number from 60 to 1000, got '\(text)'")
                }
                trace.width = width
                traceOptions.append(name)
            default:
                throw UsageError(description: "unknown option '\(argument)'")
            }
        }

        guard let target = positionals.first else {
            if wantsHelp { return .help }
            throw UsageError(description: "missing the daemon to talk to: phone or watch")
        }
        if target == "trace" {
            guard positionals.count == 1 else { throw UsageError(description: "unexpected argument '\(positionals[1])' after trace") }
            guard json == nil else { throw UsageError(description: "'trace' takes no --json arguments") }
            guard [trace.htmlPath != nil, trace.mermaid, trace.follow].filter({ $0 }).count <= 1 else {
                throw UsageError(description: "give one of --html, --mermaid and --follow")
            }
            if trace.follow, trace.sources.contains(where: { !$0.hasSuffix(".ctl") }) {
                throw UsageError(description: "--follow reads control sockets (ending in .ctl), not trace files")
            }
            trace.home = home
            trace.timeoutSeconds = timeout
            return .trace(trace)
        }
        if let option = traceOptions.first { throw UsageError(description: "\(option) is an option of 'linkctl trace'") }
        if target == "clock" {
            guard json == nil else { throw UsageError(description: "'clock' takes no --json arguments") }
            let words = Array(positionals.dropFirst())
            let action: ClockInvocation.Action
            if words.isEmpty {
                action = .show
            } else if words.count == 2, words[0] == "advance" {
                guard let milliseconds = ClockCommand.milliseconds(words[1]) else {
                    throw UsageError(description: "'clock advance' needs a duration such as 500ms, 90s, 15m, 1h, 1d or 1h30m, got '\(words[1])'")
                }
                action = .advance(milliseconds: milliseconds)
            } else if words.count == 2, words[0] == "set" {
                action = .set(time: words[1])
            } else {
                throw UsageError(description: "'clock' is followed by nothing, 'advance DURATION' or 'set TIME'")
            }
            return .clock(ClockInvocation(action: action, home: home, timeoutSeconds: timeout))
        }
        guard let device = LinkctlInvocation.Device(rawValue: target) else {
            throw UsageError(description: "unknown daemon '\(target)' (expected phone or watch)")
        }
        if wantsHelp {
            return .ops(LinkctlInvocation(device: device, op: "ops.list", home: home, timeoutSeconds: timeout, argumentsJSON: nil))
        }
        guard positionals.count >= 2 else {
            throw UsageError(description: "missing the operation, e.g. 'linkctl \(target) status'")
        }
        guard positionals.count == 2 else {
            throw UsageError(description: "unexpected argument '\(positionals[2])' (pass arguments with --json)")
        }
        let op = positionals[1]
        let invocation = LinkctlInvocation(device: device, op: op, home: home, timeoutSeconds: timeout, argumentsJSON: json)
        if op == "events" {
            guard json == nil else {
                throw UsageError(description: "'events' takes no --json arguments")
            }
            return .events(invocation)
        }
        return .call(invocation)
    }
}

/// One request to one daemon.
struct LinkctlInvocation: Equatable {
    enum Device: String {
        case phone, watch
    }

    var device: Device
    var op: String
    var home: String?
    var timeoutSeconds: Double
    var argumentsJSON: String?
}

/// `linkctl trace`: where the traces come from and what to make of them.
struct TraceInvocation: Equatable {
    /// Control sockets (`*.ctl`) and trace files; empty: HOME/phone.ctl and HOME/watch.ctl.
    var sources: [String] = []
    var htmlPath: String?
    var mermaid = false
    var follow = false
    var width = 100
    /// Only the newest entries of the merged trace (a Mermaid diagram for a pull request).
    var last: Int?
    var home: String?
    var timeoutSeconds = 10.0
}

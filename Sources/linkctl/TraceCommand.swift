import Foundation
import LinkClient
import LinkControl
import LinkJSON
import LinkTrace

/// `linkctl trace`: reads the traces, merges them and writes what was asked.
enum TraceCommand {
    static func sources(_ invocation: TraceInvocation) -> [String] {
        if !invocation.sources.isEmpty { return invocation.sources }
        let home = invocation.home ?? WatchLinkHome.defaultPath()
        return [
            WatchLinkHome.path(WatchLinkHome.phoneControlSocketName, in: home),
            WatchLinkHome.path(WatchLinkHome.watchControlSocketName, in: home),
        ]
    }

    static func run(_ invocation: TraceInvocation) -> Never {
        if invocation.follow { follow(invocation) }
        var traces: [[TraceEntry]] = []
        for source in sources(invocation) {
            if source.hasSuffix(".ctl") {
                do {
                    let client = try ControlClient(socketPath: source, timeoutSeconds: invocation.timeoutSeconds)
                    traces.append(try TraceReader.read { try client.call("trace.get", $0) })
                    client.close()
                } catch {
                    // A daemon that is not running (killed, stopped): its file may say more.
                    writeStandardError("linkctl: trace: skipping \(source): \(error)\n")
                }
            } else {
                guard let data = FileManager.default.contents(atPath: source) else {
                    fail(.cannotConnect, "trace: cannot read the trace file \(source)")
                }
                let (entries, skipped) = TraceFile.read(Array(data))
                if skipped > 0 { writeStandardError("linkctl: trace: \(source): skipped \(skipped) lines that are not entries\n") }
                traces.append(entries)
            }
        }
        guard !traces.isEmpty else { fail(.cannotConnect, "trace: no daemon answered and no trace file was given") }
        var merged = MergedTrace(traces)
        if let last = invocation.last, merged.entries.count > last { merged = MergedTrace([Array(merged.entries.suffix(last))]) }
        if let path = invocation.htmlPath {
            let page = TraceHTMLPage.render(TraceDiagram(merged))
            guard FileManager.default.createFile(atPath: path, contents: Data(page.utf8)) else {
                fail(.transport, "trace: cannot write \(path)")
            }
            writeStandardError("linkctl: trace: \(merged.entries.count) entries written to \(path)\n")
        } else if invocation.mermaid {
            writeStandardOutput(MermaidDiagram.render(TraceDiagram(merged, options: .init(showsHandshake: false))))
        } else {
            var output = ""
            for entry in merged.entries { output += JSON.serialize(entry.json) + "\n" }
            writeStandardOutput(output)
        }
        exit(ExitStatus.success.rawValue)
    }

    /// Prints what each daemon has, merged, then every new entry as it comes, in time order
    /// within a short window.
    static func follow(_ invocation: TraceInvocation) -> Never {
        var clients: [ControlClient] = []
        var backlog: [[TraceEntry]] = []
        for source in sources(invocation) {
            do {
                let client = try ControlClient(socketPath: source, timeoutSeconds: invocation.timeoutSeconds)
                let first = try client.call("trace.get", ["limit": 100_000, "follow": true])
                backlog.append((first["entries"]?.arrayValue ?? []).compactMap(TraceEntry.init(json:)))
                clients.append(client)
            } catch {
                writeStandardError("linkctl: trace: skipping \(source): \(error)\n")
            }
        }
        guard !clients.isEmpty else { fail(.cannotConnect, "trace: no daemon answered") }
        var columns = TraceColumns(width: invocation.width)
        writeStandardOutput(columns.header)
        var output = ""
        for entry in MergedTrace(backlog).entries { output += columns.line(entry) }
        writeStandardOutput(output)
        var pending: [TraceEntry] = []
        let window: Int64 = 100_000
        while !clients.isEmpty {
            var open: [ControlClient] = []
            for client in clients {
                do {
                    while let event = try client.nextEvent(timeoutSeconds: clients.count == 1 ? 0.1 : 0.02) {
                        if event.name == "trace.entry", let entry = TraceEntry(json: .object(event.data)) { pending.append(entry) }
                    }
                    open.append(client)
                } catch ControlClientError.connectionClosed {
                    continue
                } catch {
                    writeStandardError("linkctl: trace: \(error)\n")
                }
            }
            clients = open
            pending.sort { $0.time < $1.time }
            let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
            var text = ""
            while let first = pending.first, first.time < now - window || clients.isEmpty {
                text += columns.line(first)
                pending.removeFirst()
            }
            if !text.isEmpty { writeStandardOutput(text) }
        }
        exit(ExitStatus.success.rawValue)
    }
}

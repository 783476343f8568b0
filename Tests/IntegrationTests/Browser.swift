import Foundation
import WatchLinkTesting
import XCTest

/// Headless Chromium (Debian's `chromium`, installed by scripts/ensure-deps.sh), for checking
/// the trace's HTML page and Mermaid output in a real browser. `WATCHLINK_CHROMIUM` names
/// another binary.
enum Browser {
    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Where pictures are kept for people to look at: `.build/trace-pictures/`.
    static var pictures: String {
        let path = packageRoot + "/.build/trace-pictures"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func chromium() throws -> String {
        var candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        if let path = ProcessInfo.processInfo.environment["WATCHLINK_CHROMIUM"] { candidates.insert(path, at: 0) }
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("no Chromium (scripts/ensure-deps.sh installs Debian's chromium)")
        }
        return path
    }

    /// Runs Chromium headless on `file` with `arguments` (e.g. `--dump-dom`); its standard output.
    static func run(
        _ file: String, _ arguments: [String], budgetMilliseconds: Int = 10_000, timeout: Double = 120,
        fragment: String? = nil
    ) throws -> String {
        let profile = TemporaryHome()
        defer { profile.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try chromium())
        process.arguments =
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--user-data-dir=\(profile.path)", "--virtual-time-budget=\(budgetMilliseconds)",
            ]
            + arguments + [URL(fileURLWithPath: file).absoluteString + (fragment.map { "#" + $0 } ?? "")]
        let output = profile.path + "/out"
        FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = FileHandle.nullDevice
        try process.run()
        try? handle.close()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TimedOutError("chromium \(arguments) did not finish within \(timeout) s")
        }
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    struct TimedOutError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// Mermaid's own parser (mermaid.min.js, put in .build/tools/mermaid by
/// scripts/ensure-mermaid.sh) run in headless Chromium on a diagram.
enum MermaidInBrowser {
    static func assertParses(_ diagram: String, keepingAs name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let script = ProcessInfo.processInfo.environment["WATCHLINK_MERMAID_JS"] ?? Browser.packageRoot + "/.build/tools/mermaid/mermaid.min.js"
        guard FileManager.default.fileExists(atPath: script) else {
            throw XCTSkip("no \(script) (scripts/ensure-mermaid.sh fetches it)")
        }
        let page = Browser.pictures + "/\(name)-mermaid.html"
        let source = diagram.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
        let html = """
            <!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
            <pre id="source">\(source)</pre><div id="result">pending</div><div id="diagram"></div>
            <script src="\(URL(fileURLWithPath: script).absoluteString)"></script>
            <script>
            mermaid.initialize({ startOnLoad: false, sequence: { useMaxWidth: false } });
            var text = document.getElementById("source").textContent;
            mermaid.parse(text).then(function (r) {
              document.getElementById("result").textContent = "parsed " + r.diagramType;
              return mermaid.render("rendered", text).then(function (out) { document.getElementById("diagram").innerHTML = out.svg; });
            }).catch(function (e) { document.getElementById("result").textContent = "error: " + e.message; });
            </script></body></html>
            """
        try html.write(toFile: page, atomically: true, encoding: .utf8)
        let dom = try Browser.run(page, ["--dump-dom"], budgetMilliseconds: 30_000)
        guard let start = dom.range(of: "<div id=\"result\">"), let end = dom[start.upperBound...].range(of: "</div>") else {
            return XCTFail("no result in the page: \(dom.prefix(500))", file: file, line: line)
        }
        XCTAssertEqual(String(dom[start.upperBound..<end.lowerBound]), "parsed sequence", "Mermaid parses the diagram", file: file, line: line)
        _ = try Browser.run(page, ["--screenshot=\(Browser.pictures)/\(name)-mermaid.png", "--window-size=1400,2400"], budgetMilliseconds: 30_000)
    }
}

import LinkJSON

/// A merged trace as one self-contained HTML page: no network, no external script or style.
///
/// The steps of the ``TraceDiagram`` travel as JSON inside the page; a small script draws
/// only the rows in view into an SVG (so a trace of 100,000 entries scrolls as lightly as one
/// of ten), with the lanes' heads fixed on top, a time axis on the left (the clock and the
/// seconds since the first entry), filters by category, and the details of the step under the
/// pointer in a panel. Link drops, kills and errors are red, over a red band.
public enum TraceHTMLPage {
    public static func render(_ diagram: TraceDiagram, title: String = "WatchLink trace") -> String {
        let entries = diagram.trace.entries
        let start = entries.first?.time ?? 0
        var laneIndex: [TraceDiagram.Lane: Int] = [:]
        for (index, lane) in diagram.lanes.enumerated() { laneIndex[lane] = index }
        var rows: [JSONValue] = []
        rows.reserveCapacity(diagram.steps.count)
        for step in diagram.steps {
            var shape = "n", from = 0, to = -1, lost = false, count = 1
            switch step.shape {
            case .arrow(let a, let b, let isLost): shape = "a"; from = laneIndex[a] ?? 0; to = laneIndex[b] ?? 0; lost = isLost
            case .note(let a, let b): shape = "n"; from = laneIndex[a] ?? 0; to = b.flatMap { laneIndex[$0] } ?? -1
            case .run(let a, let b, let n): shape = "r"; from = laneIndex[a] ?? 0; to = laneIndex[b] ?? 0; count = n
            }
            rows.append(
                .array([
                    .string(TraceText.clock(step.time)), .int((step.time - start) / 1_000), .string(shape), .int(Int64(from)),
                    .int(Int64(to)), .bool(lost), .string(step.label), .string(step.category), .bool(step.isAlarm),
                    .string(step.details), .int(Int64(count)),
                ]))
        }
        let lanes = JSONValue.array(diagram.lanes.map { .string(TraceDiagram.laneName($0)) })
        let data = JSONValue.object(["lanes": lanes, "steps": .array(rows), "entries": .int(Int64(entries.count))])
        let json = JSON.serialize(data).replacing("</", with: "<\\/")
        let laneHeads = diagram.lanes.enumerated().map { index, lane in
            let name = escape(TraceDiagram.laneName(lane))
            let kind: String
            switch lane {
            case .phone: kind = "phone"
            case .link: kind = "link"
            case .watch: kind = "watch"
            }
            return "<div class=\"lane-head \(kind)\" data-lane=\"\(name)\" style=\"left:\(laneX(index) - 110)px\">\(name)</div>"
        }.joined()
        let filters = TraceText.categories.map {
            "<label class=\"filter \($0)\"><input type=\"checkbox\" data-category=\"\($0)\" checked> \($0)</label>"
        }.joined(separator: " ")
        let first = entries.first.map { TraceText.clock($0.time) } ?? "-"
        let last = entries.last.map { TraceText.clock($0.time) } ?? "-"
        let alarms = diagram.steps.filter(\.isAlarm).count
        let summary = "\(entries.count) entries, \(diagram.steps.count) steps (\(alarms) marked ⚠), \(first) to \(last) UTC"
        return page.replacing("{{TITLE}}", with: escape(title))
            .replacing("{{SUMMARY}}", with: escape(summary))
            .replacing("{{FILTERS}}", with: filters)
            .replacing("{{LANES}}", with: laneHeads)
            .replacing("{{WIDTH}}", with: "\(laneX(diagram.lanes.count - 1) + 240)")
            .replacing("{{DATA}}", with: json)
    }

    /// The x of lane `index`'s line (the script computes the same).
    static func laneX(_ index: Int) -> Int { 330 + index * 300 }

    static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }

    static let page = #"""
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>{{TITLE}}</title>
        <style>
        body { margin: 0; font: 13px/1.3 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d2733; background: #fff; }
        header { position: sticky; top: 0; z-index: 3; background: #f4f6f8; border-bottom: 1px solid #cfd6dd; padding: 8px 12px 0; }
        h1 { font-size: 16px; margin: 0 0 4px; }
        #summary { color: #555; margin-bottom: 6px; }
        #filters button { margin-left: 4px; font: inherit; padding: 0 6px; }
        .filter { margin-right: 10px; white-space: nowrap; }
        #heads { position: relative; height: 30px; margin: 6px 0 0 -12px; width: {{WIDTH}}px; }
        .lane-head { position: absolute; top: 2px; width: 220px; text-align: center; font-weight: 600; padding: 4px 0;
                     border-radius: 6px; background: #dde7f3; border: 1px solid #9fb6d3; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        .lane-head.link { background: #ececec; border-color: #b9b9b9; }
        .lane-head.watch { background: #e2f1e4; border-color: #9cc7a3; }
        .axis-head { position: absolute; left: 8px; top: 8px; color: #555; font-weight: 600; }
        #scroller { position: relative; overflow: auto; height: calc(100vh - 150px); }
        #canvas { display: block; }
        #details { position: fixed; right: 12px; bottom: 12px; max-width: 480px; max-height: 45vh; overflow: auto; white-space: pre-wrap;
                   font: 12px/1.35 ui-monospace, Menlo, Consolas, monospace; background: #fffef4; border: 1px solid #d8cf94;
                   padding: 8px; border-radius: 6px; box-shadow: 0 2px 8px rgba(0,0,0,.15); display: none; z-index: 4; }
        .lane-line { stroke: #c3ccd6; stroke-width: 1; }
        .lane-line.link { stroke: #aaa; stroke-dasharray: 4 4; }
        .time { fill: #555; font: 11px ui-monospace, Menlo, Consolas, monospace; }
        .step text { font-size: 12px; fill: #1d2733; }
        .arrow line { stroke-width: 1.6; }
        .arrow.message line { stroke: #2d6cdf; } .arrow.message polygon { fill: #2d6cdf; }
        .arrow.userInfo line { stroke: #8a3fd1; } .arrow.userInfo polygon { fill: #8a3fd1; }
        .arrow.context line { stroke: #d17a00; } .arrow.context polygon { fill: #d17a00; }
        .arrow.file line { stroke: #0c8a6a; } .arrow.file polygon { fill: #0c8a6a; }
        .arrow.state line, .arrow.handshake line { stroke: #7b8794; } .arrow.state polygon, .arrow.handshake polygon { fill: #7b8794; }
        .arrow.link line { stroke: #c62828; } .arrow.link polygon { fill: #c62828; }
        .arrow.reverse line { stroke-dasharray: 6 3; }
        .arrow.lost line { stroke: #c62828; stroke-dasharray: 3 3; }
        .note rect { fill: #fff8d6; stroke: #d9c46a; }
        .note.op rect { fill: #eef3fb; stroke: #9fb6d3; }
        .note.link rect { fill: #f1f1f1; stroke: #b9b9b9; }
        .run rect { fill: #f0f6ff; stroke: #6d8fc7; stroke-dasharray: 5 3; }
        .alarm-band { fill: #fde7e7; }
        .alarm text { fill: #b71c1c; font-weight: 600; }
        .alarm rect { stroke: #c62828; fill: #fff0f0; }
        .step:hover text { text-decoration: underline; }
        .step .hover-target { fill: transparent !important; stroke: none !important; }
        </style>
        </head>
        <body>
        <header>
        <h1>{{TITLE}}</h1>
        <div id="summary">{{SUMMARY}}</div>
        <div id="filters">{{FILTERS}} <button id="previous-alarm" title="previous link drop, kill or error (key p)">◀ ⚠</button><button id="next-alarm" title="next link drop, kill or error (key n)">⚠ ▶</button></div>
        <div id="heads"><span class="axis-head">time (UTC) · +s</span>{{LANES}}</div>
        </header>
        <div id="scroller"><svg id="canvas" xmlns="http://www.w3.org/2000/svg" width="{{WIDTH}}" height="100"></svg></div>
        <div id="details"></div>
        <script type="application/json" id="trace-data">{{DATA}}</script>
        <script>
        (function () {
          "use strict";
          var data = JSON.parse(document.getElementById("trace-data").textContent);
          var ROW = 24, TOP = 10, OVERSCAN = 30;
          var svg = document.getElementById("canvas");
          var scroller = document.getElementById("scroller");
          var details = document.getElementById("details");
          var NS = "http://www.w3.org/2000/svg";
          var enabled = {};
          var visible = [];
          function laneX(i) { return 330 + i * 300; }
          var width = laneX(data.lanes.length - 1) + 240;
          function el(name, attrs, parent) {
            var e = document.createElementNS(NS, name);
            for (var k in attrs) e.setAttribute(k, attrs[k]);
            if (parent) parent.appendChild(e);
            return e;
          }
          function text(parent, x, y, s, anchor) {
            var t = el("text", { x: x, y: y, "text-anchor": anchor || "middle" }, parent);
            t.textContent = s.length > 70 ? s.slice(0, 69) + "…" : s;
            return t;
          }
          function filter() {
            visible = [];
            for (var i = 0; i < data.steps.length; i++) if (enabled[data.steps[i][7]] !== false) visible.push(i);
            svg.setAttribute("height", TOP + visible.length * ROW + 40);
            draw();
          }
          function draw() {
            while (svg.firstChild) svg.removeChild(svg.firstChild);
            var first = Math.max(0, Math.floor(scroller.scrollTop / ROW) - OVERSCAN);
            var last = Math.min(visible.length, Math.ceil((scroller.scrollTop + scroller.clientHeight) / ROW) + OVERSCAN);
            var y0 = TOP + first * ROW, y1 = TOP + last * ROW;
            var lanes = el("g", { "class": "lanes" }, svg);
            for (var l = 0; l < data.lanes.length; l++) {
              el("line", { "class": "lane-line" + (l === 1 ? " link" : ""), x1: laneX(l), x2: laneX(l), y1: y0, y2: y1 }, lanes);
            }
            for (var r = first; r < last; r++) drawStep(visible[r], TOP + r * ROW + ROW / 2);
          }
          function drawStep(i, y) {
            var s = data.steps[i];
            var shape = s[2], from = s[3], to = s[4], lost = s[5], label = s[6], category = s[7], alarm = s[8];
            var cls = "step " + (shape === "a" ? "arrow" : shape === "r" ? "run" : "note") + " " + category + (alarm ? " alarm" : "") + (lost ? " lost" : "");
            if (shape === "a" && to < from) cls += " reverse";
            if (alarm) el("rect", { "class": "alarm-band", x: 0, y: y - ROW / 2, width: width, height: ROW }, svg);
            var g = el("g", { "class": cls, "data-step": i }, svg);
            var t = text(g, 6, y + 4, s[0].slice(0, 12) + "  +" + (s[1] / 1000).toFixed(3), "start");
            t.setAttribute("class", "time");
            if (shape === "a") {
              var x1 = laneX(from), x2 = laneX(to), dir = x2 >= x1 ? 1 : -1;
              el("line", { x1: x1, y1: y + 4, x2: x2 - dir * 7, y2: y + 4 }, g);
              if (lost) {
                text(g, x2, y + 9, "✕").setAttribute("class", "lost-mark");
              } else {
                el("polygon", { points: x2 + "," + (y + 4) + " " + (x2 - dir * 8) + "," + (y) + " " + (x2 - dir * 8) + "," + (y + 8) }, g);
              }
              text(g, (x1 + x2) / 2, y - 1, label);
            } else {
              var a = laneX(from), b = to >= 0 ? laneX(to) : a;
              var left = Math.min(a, b) - 125, right = Math.max(a, b) + 125;
              el("rect", { x: left, y: y - ROW / 2 + 2, width: right - left, height: ROW - 4, rx: 4 }, g);
              text(g, (left + right) / 2, y + 4, label);
            }
            el("rect", { "class": "hover-target", x: 0, y: y - ROW / 2, width: width, height: ROW }, g);
            var title = el("title", {}, g);
            title.textContent = s[9];
          }
          svg.addEventListener("mouseover", function (event) {
            var g = event.target.closest ? event.target.closest("g.step") : null;
            if (!g) { details.style.display = "none"; return; }
            var s = data.steps[+g.getAttribute("data-step")];
            details.textContent = s[6] + "\n\n" + s[9];
            details.style.display = "block";
          });
          svg.addEventListener("mouseleave", function () { details.style.display = "none"; });
          var pending = false;
          scroller.addEventListener("scroll", function () {
            if (pending) return;
            pending = true;
            window.requestAnimationFrame(function () { pending = false; draw(); });
          });
          var boxes = document.querySelectorAll("#filters input");
          for (var b = 0; b < boxes.length; b++) {
            boxes[b].addEventListener("change", function (event) {
              enabled[event.target.getAttribute("data-category")] = event.target.checked;
              filter();
            });
          }
          window.addEventListener("resize", draw);
          // Link drops, kills and errors, one after the other.
          function jumpToAlarm(direction) {
            // An alarm jumped to is shown on the second row.
            var row = Math.round(scroller.scrollTop / ROW) + 1 + direction;
            for (; row >= 0 && row < visible.length; row += direction) {
              if (data.steps[visible[row]][8]) { scroller.scrollTop = Math.max(0, row * ROW - ROW); draw(); return; }
            }
          }
          document.getElementById("next-alarm").addEventListener("click", function () { jumpToAlarm(1); });
          document.getElementById("previous-alarm").addEventListener("click", function () { jumpToAlarm(-1); });
          document.addEventListener("keydown", function (event) {
            if (event.key === "n") jumpToAlarm(1);
            if (event.key === "p") jumpToAlarm(-1);
          });
          var started = performance.now();
          filter();
          var jump = /^#row=(\d+)$/.exec(window.location.hash);
          if (jump) { scroller.scrollTop = Math.max(0, +jump[1] * ROW - ROW); draw(); }
          document.documentElement.setAttribute("data-steps", String(data.steps.length));
          document.documentElement.setAttribute("data-draw-ms", String(Math.round(performance.now() - started)));
        })();
        </script>
        </body>
        </html>
        """#
}

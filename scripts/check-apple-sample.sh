#!/usr/bin/env bash
# Builds the watch extension delegate and session delegator of Apple's sample "Transferring data
# with Watch Connectivity" (SimpleWatchConnectivity) unchanged against this package's WatchKit and
# WatchConnectivity, runs it as the watch app of a pair, transfers a userInfo from the phone and
# prints what the app's own log and watchd show: launched in the background for a
# WKWatchConnectivityRefreshBackgroundTask, the task completed once hasContentPending turned
# false, the app suspended, woken for the snapshot refresh it schedules, suspended again.
#
# Usage: scripts/check-apple-sample.sh DIR    (DIR: the sample's download, unpacked)
#
# The sample's own files are compiled as published: "SimpleWatchConnectivity WatchKit
# Extension/ExtensionDelegate.swift", Shared/SessionDelegator.swift, Shared/Logger.swift and
# Shared/CommandStatus.swift. Around them: a stand-in for the part of UIKit they name (UIColor),
# the sample's PayloadKey taken out of Shared/TestDataProvider.swift (whose drawing needs UIKit),
# and a main.swift that runs the delegate (WKApplicationMain).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sample=${1:?usage: scripts/check-apple-sample.sh DIR (the unpacked sample)}
sample=$(cd "$sample" && pwd)
delegate=$(find "$sample" -path '*WatchKit Extension/ExtensionDelegate.swift' | head -1)
shared=$(dirname "$(find "$sample" -name SessionDelegator.swift | head -1)")
[ -f "$delegate" ] && [ -f "$shared/SessionDelegator.swift" ] || {
    echo "check-apple-sample: $sample has no WatchKit Extension/ExtensionDelegate.swift and Shared/SessionDelegator.swift" >&2
    exit 2
}

scripts/ensure-deps.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/wl-sample.XXXXXX")
home=$(mktemp -d /tmp/wl.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work" "$home"
}
trap cleanup EXIT

mkdir -p "$work/Sources/SampleWatch" "$work/Sources/UIKit"
cp "$delegate" "$shared/SessionDelegator.swift" "$shared/Logger.swift" "$shared/CommandStatus.swift" "$work/Sources/SampleWatch/"
awk '/^struct PayloadKey/,/^}/' "$shared/TestDataProvider.swift" > "$work/Sources/SampleWatch/PayloadKey.swift"
cat > "$work/Sources/SampleWatch/main.swift" <<'EOF'
import WatchKit

WKApplicationMain(ExtensionDelegate())
EOF
cat > "$work/Sources/UIKit/UIKit.swift" <<'EOF'
// The part of UIKit the sample's shared files name.
@_exported import Foundation

open class UIColor: NSObject, NSSecureCoding {
    public static var supportsSecureCoding: Bool { true }
    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) { super.init() }
    public required init?(coder: NSCoder) { super.init() }
    public func encode(with coder: NSCoder) {}
}
EOF
cat > "$work/Package.swift" <<EOF
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AppleSample",
    dependencies: [.package(path: "$root")],
    targets: [
        .target(name: "UIKit", path: "Sources/UIKit"),
        .executableTarget(name: "SampleWatch",
                          dependencies: ["UIKit", .product(name: "WatchKit", package: "$(basename "$root")"),
                                         .product(name: "WatchConnectivity", package: "$(basename "$root")")],
                          path: "Sources/SampleWatch", swiftSettings: [.swiftLanguageMode(.v5)]),
    ])
EOF
echo "check-apple-sample: building the sample's watch app (its warnings, if any, follow)"
(cd "$work" && swift build 2>&1 | grep -E "SampleWatch/.*(warning|error):" || true)
(cd "$work" && swift build >/dev/null)
app="$work/.build/debug/SampleWatch"

swift build --product phoned >/dev/null && swift build --product watchd >/dev/null && swift build --product linkctl >/dev/null
bin=$(swift build --show-bin-path)
linkctl() { "$bin/linkctl" --home "$home" "$@"; }
"$bin/phoned" --home "$home" --activate 2>"$home/phoned.log" & pids+=($!)
"$bin/watchd" --home "$home" --activate --launch-policy immediate 2>"$home/watchd.log" & pids+=($!)
for _ in $(seq 1 200); do linkctl watch status >/dev/null 2>&1 && linkctl phone status >/dev/null 2>&1 && break; sleep 0.05; done

# The sample's Logger appends to Documents/Logs/<date>.log in the user's home (Foundation takes
# it from the password database): what this run adds is shown below.
logs="$(getent passwd "$(id -un)" | cut -d: -f6)/Documents/Logs"
before=$(cat "$logs"/*.log 2>/dev/null | wc -l)
linkctl watch app.install --json "{\"command\": [\"$app\"]}" >/dev/null
# A userInfo as the sample's phone app sends it: a time stamp and colour data.
linkctl phone userInfo.transfer --json '{"userInfo": {"timeStamp": "12:00:00", "colorData": {"$data": "AAEC"}}}' >/dev/null

suspensions() { grep -c "suspended the app" "$home/watchd.log" || true; }
for _ in $(seq 1 200); do [ "$(suspensions)" -ge 2 ] && break; sleep 0.05; done
echo "--- watchd"
grep -E "app: |background launches" "$home/watchd.log" | sed 's/^[^ ]* //'
echo "--- the sample's log ($logs)"
cat "$logs"/*.log 2>/dev/null | tail -n +$((before + 1))
echo "--- status.backgroundTasks"
linkctl watch status | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["backgroundTasks"]["tasks"]))'
[ "$(suspensions)" -ge 2 ] || { echo "check-apple-sample: the app was not suspended twice (after its WatchConnectivity task and its snapshot task)" >&2; exit 1; }
echo "check-apple-sample: the sample ran as a watch app: its tasks completed, suspended twice"

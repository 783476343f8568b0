#!/usr/bin/env python3
"""Measures two builds of the daemons against each other: what a speed trick buys.

A pair of daemons from each build directory runs at once; every row is measured on both in
the same round, the first of the two alternating from round to round, and each build keeps its
best run (other work on the machine only ever makes a run slower). A round's two runs are
also compared with each other, and the median of those paired ratios is printed beside the
ratio of the bests: where the two disagree by more than a few percent, the host was too noisy
for the row and it is worth running again. docs/performance.md says how its "what each trick
buys" lines were measured with this.

Usage: python3 scripts/bench/ab.py A_BIN_DIR B_BIN_DIR [--rounds N] [--rows ROW,...]
  (release builds: scripts/build-release.sh, with WATCHLINK_RELEASE_WITHOUT and its own
  WATCHLINK_RELEASE_BUILD_PATH for a build without a flag)
Rows: rtt-data-64, rtt-dict-132, rtt-data-16k, rtt-dict-16k, control-132, control-16k,
oneway-dict-132, oneway-data-16k, oneway-dict-16k, userinfo, apns-h2c (h2load's pushes/s, as the bench's APNs row). B/A above 1.00 means B is slower for times and faster for rates.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apns  # noqa: E402
from run import Pair, call, pin_process, run_json  # noqa: E402

ROUND_TRIPS = {
    "rtt-data-64": ("round trip p50, data 64 B", {"size": 64, "kind": "data"}),
    "rtt-dict-132": ("round trip p50, dictionary 132 B", {"size": 64, "kind": "dictionary"}),
    "rtt-data-16k": ("round trip p50, data 16384 B", {"size": 16384, "kind": "data"}),
    "rtt-dict-16k": ("round trip p50, dictionary 16483 B", {"size": 16384, "kind": "dictionary"}),
}
RATES = {
    "oneway-dict-132": ("one-way messages/s, dictionary 132 B", "bench.oneWay", {"size": 64, "kind": "dictionary", "count": 200000}, "messagesPerSecond"),
    "oneway-data-16k": ("one-way messages/s, data 16384 B", "bench.oneWay", {"size": 16384, "kind": "data", "count": 50000}, "messagesPerSecond"),
    "oneway-dict-16k": ("one-way messages/s, dictionary 16483 B", "bench.oneWay", {"size": 16384, "kind": "dictionary", "count": 50000}, "messagesPerSecond"),
    "userinfo": ("userInfo end to end, transfers/s", "bench.userInfo", {"size": 100, "count": 100000}, "transfersPerSecond"),
}
CONTROL = {"control-132": ("control message.send round trip p50, 132 B", "64"),
           "control-16k": ("control message.send round trip p50, 16 KiB", "16384")}
APNS = {"apns-h2c": "APNs pushes/s, h2c, h2load 10 conn x 10 streams"}
ALL = [*ROUND_TRIPS, *CONTROL, *RATES, *APNS]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rounds", type=int, default=20, help="rounds of the round-trip rows (rates take 8, userInfo and APNs 6)")
    parser.add_argument("--rows", default=",".join(ALL))
    args = parser.parse_args()
    rows = args.rows.split(",")
    unknown = [r for r in rows if r not in ALL]
    if unknown:
        parser.error(f"unknown rows {unknown}; rows: {', '.join(ALL)}")
    for directory in (args.a, args.b):
        for name in ("phoned", "watchd"):
            if not os.access(os.path.join(directory, name), os.X_OK):
                parser.error(f"{directory} has no {name}")

    work = tempfile.mkdtemp(prefix="wlab-", dir="/tmp")
    pairs = {}
    try:
        client = os.path.join(work, "control_client")
        subprocess.run(["cc", "-O2", "-o", client, os.path.join(os.path.dirname(__file__), "control_client.c")], check=True)
        for label, directory in (("A", args.a), ("B", args.b)):
            home = os.path.join(work, label)
            os.mkdir(home)
            pairs[label] = Pair(directory, home)
        order = lambda round: ("A", "B") if round % 2 == 0 else ("B", "A")
        results = {}  # row -> (name, better, {label: [values by round]})

        one_core = {min(os.sched_getaffinity(0))}
        timed = [r for r in rows if r in ROUND_TRIPS or r in CONTROL]
        if timed:
            for pair in pairs.values():
                call(pair.watch, "replies.set", {"mode": "echo"})
                for proc in pair.procs.values():
                    pin_process(proc.pid, one_core)
                for key in timed:  # warm-up
                    if key in ROUND_TRIPS:
                        call(pair.phone, "bench.roundTrip", {**ROUND_TRIPS[key][1], "count": 500})
                    else:
                        run_json([client, "rtt", pair.phone, CONTROL[key][1], "200"], one_core)
            for round in range(args.rounds):
                for key in timed:
                    for label in order(round):
                        pair = pairs[label]
                        if key in ROUND_TRIPS:
                            value = call(pair.phone, "bench.roundTrip", {**ROUND_TRIPS[key][1], "count": 2000})["p50Us"]
                            name = ROUND_TRIPS[key][0]
                        else:
                            name, size = CONTROL[key]
                            value = run_json([client, "rtt", pair.phone, size, "1000"], one_core)["p50Us"]
                        results.setdefault(key, (name, "lower", {"A": [], "B": []}))[2][label].append(value)
            for pair in pairs.values():
                for proc in pair.procs.values():
                    pin_process(proc.pid, os.sched_getaffinity(0))
                call(pair.watch, "replies.set", {"mode": "empty"})
        for key in [r for r in rows if r in RATES]:
            name, op, op_args, field = RATES[key]
            for round in range(6 if key == "userinfo" else 8):
                for label in order(round):
                    value = call(pairs[label].phone, op, op_args)[field]
                    results.setdefault(key, (name, "higher", {"A": [], "B": []}))[2][label].append(value)
        if "apns-h2c" in rows:
            loads = {label: apns.prepare(lambda op, args=None, pair=pair: call(pair.phone, op, args), pair.home)
                     for label, pair in pairs.items()}
            for round in range(6):
                for label in order(round):
                    url, _, headers, payload = loads[label]
                    rate, ok, _ = apns.h2load(url, 50000, headers, payload)
                    if ok != 50000:
                        raise RuntimeError(f"{label}: {ok} of 50000 pushes succeeded")
                    results.setdefault("apns-h2c", (APNS["apns-h2c"], "higher", {"A": [], "B": []}))[2][label].append(rate)
    finally:
        for pair in pairs.values():
            pair.stop()
        shutil.rmtree(work, ignore_errors=True)

    print(f"A: {args.a}\nB: {args.b}\n")
    print(f"{'row':44} {'A best':>12} {'B best':>12} {'B/A':>7} {'paired':>7}  runs")
    for key in rows:
        name, better, values = results[key]
        pick = min if better == "lower" else max
        a, b = pick(values["A"]), pick(values["B"])
        paired = statistics.median(y / x for x, y in zip(values["A"], values["B"]))
        print(f"{name:44} {a:12.1f} {b:12.1f} {b / a:6.3f}x {paired:6.3f}x  {len(values['A'])}")


if __name__ == "__main__":
    sys.exit(main())

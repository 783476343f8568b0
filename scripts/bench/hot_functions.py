#!/usr/bin/env python3
"""Writes Sources/hot-functions.order: the functions the daemons run for every message, hottest
first, for the release link to lay side by side (scripts/build-release.sh, docs/performance.md).

Each daemon runs under callgrind in turn while the other runs as it is, and the benchmark's
workloads go through the pair: round trips of Data and dictionaries (64 B / 132 B and 16 KiB),
one-way messages, durable userInfo transfers, and message.send through the control socket.
A function is kept when it runs at least once a message on average in one workload (its own
instructions, without its callees'); those of more workloads come first (what every message
runs through, then what some do), and among those of as many, the most instructions per
message summed over the workloads.

Usage: python3 scripts/bench/hot_functions.py BIN_DIR   (a release build's bin directory;
needs valgrind)
       python3 scripts/bench/hot_functions.py --stale BIN_DIR
           exits 1 when one of the 150 hottest listed functions, or more than 1% of all, is no
           longer in the daemons there: the list is older than the code, write it again
       python3 scripts/bench/hot_functions.py --check BIN_DIR
           exits 1 when the daemons there do not have the listed functions side by side (a
           build directory made before the release flags changed keeps objects built without
           them: remove it and build again)
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Pair, call  # noqa: E402  (the benchmark's pair of daemons and control client)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUTPUT = os.path.join(ROOT, "Sources", "hot-functions.order")

# (name, op, args, messages it sends): each is run once to warm up, then once measured.
WORKLOADS = [
    ("round trip, Data 64 B", "bench.roundTrip", {"size": 64, "kind": "data", "count": 2000}, 2000),
    ("round trip, Data 16 KiB", "bench.roundTrip", {"size": 16384, "kind": "data", "count": 2000}, 2000),
    ("round trip, dictionary 132 B", "bench.roundTrip", {"size": 132, "kind": "dictionary", "count": 2000}, 2000),
    ("round trip, dictionary 16 KiB", "bench.roundTrip", {"size": 16384, "kind": "dictionary", "count": 2000}, 2000),
    ("one-way, Data 64 B", "bench.oneWay", {"size": 64, "kind": "data", "count": 20000}, 20000),
    ("one-way, dictionary 132 B", "bench.oneWay", {"size": 132, "kind": "dictionary", "count": 20000}, 20000),
    ("one-way, Data 16 KiB", "bench.oneWay", {"size": 16384, "kind": "data", "count": 5000}, 5000),
    ("userInfo, durable", "bench.userInfo", {"size": 100, "count": 5000}, 5000),
]
CONTROL_SENDS = 1000  # message.send through phoned's control socket, 132 B and 16 KiB


def control_sends(client, path, size, count):
    """`count` message.send of the benchmark's 10-key dictionary of about `size` bytes, one at
    a time, by the benchmark's own client (scripts/bench/control_client.c, built as `client`)."""
    subprocess.run([client, "rtt", path, str(size), str(count)], check=True, stdout=subprocess.DEVNULL)


def wait_for(predicate, what, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def profile(bin_dir, profiled, out_dir, client):
    """Runs the workloads with `profiled` (phoned or watchd) under callgrind; returns
    {workload: callgrind output file}."""
    home = tempfile.mkdtemp(prefix="wlhot-", dir="/tmp")
    callgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--demangle=no",
                 f"--callgrind-out-file={out_dir}/{profiled}.%p.out"]
    pair = None
    try:
        pair = Pair(bin_dir, home, wrap={profiled: callgrind}, start_timeout=120)
        call(pair.watch, "replies.set", {"mode": "echo"})
        pid = str(pair.procs[profiled].pid)
        files = {}

        def measured(name, run):
            run()  # warm-up, not counted: instrumentation is off
            subprocess.run(["callgrind_control", "-i", "on", pid], check=True, stdout=subprocess.DEVNULL)
            run()
            subprocess.run(["callgrind_control", "-i", "off", pid], check=True, stdout=subprocess.DEVNULL)
            before = set(os.listdir(out_dir))
            subprocess.run(["callgrind_control", "--dump=" + name, pid], check=True, stdout=subprocess.DEVNULL)
            wait_for(lambda: set(os.listdir(out_dir)) - before, f"the {name} profile", 60)
            (new,) = set(os.listdir(out_dir)) - before
            files[name] = os.path.join(out_dir, new)

        for name, op, args, _ in WORKLOADS:
            measured(name, lambda: call(pair.phone, op, args, timeout=600))
        if profiled == "phoned":
            for size in (132, 16384):
                measured(f"control message.send {size} B", lambda: control_sends(client, pair.phone, size, CONTROL_SENDS))
        return files
    finally:
        if pair:
            pair.stop()
        shutil.rmtree(home, ignore_errors=True)


def self_costs(path, binary):
    """Each function of `binary`'s own instructions in a callgrind output file."""
    costs = collections.Counter()
    objects, functions = {}, {}
    current_object = current_function = None
    after_calls = False
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            kind, index, name = m.groups()
            table = objects if kind.endswith("ob") else functions
            if name:
                table[index] = name
            if kind == "ob":
                current_object = objects[index]
            elif kind == "fn":
                current_function = functions[index]
            continue
        if line.startswith("calls="):
            after_calls = True  # the next line is the call's inclusive cost
            continue
        if line and line[0] in "0123456789+-*":
            if after_calls:
                after_calls = False
            elif current_object and os.path.basename(current_object) == binary:
                fields = line.split()
                if len(fields) > 1 and fields[-1].isdigit():
                    # callgrind names a recursive call's frames name'2, name'3, ...
                    costs[re.sub(r"'\d+$", "", current_function)] += int(fields[-1])
    return costs


def shared_section_symbols():
    """Functions of the static Swift libraries that share one `.text` section with others: the
    link can only move a section, and ordering one of these would put the whole of it (1.6 MB
    of libswiftCore) among the hot functions."""
    info = json.loads(subprocess.check_output(["swiftc", "-print-target-info"], text=True))
    static = os.path.join(os.path.dirname(info["paths"]["runtimeResourcePath"]), "swift_static", "linux")
    symbols = set()
    for archive in sorted(os.listdir(static)):
        if archive.endswith(".a"):
            table = subprocess.run(["objdump", "-t", os.path.join(static, archive)],
                                   capture_output=True, text=True).stdout
            for line in table.split("\n"):
                # "address flags section<TAB>size [visibility] name"
                where, _, what = line.partition("\t")
                if where.split()[-1:] == [".text"] and what:
                    symbols.add(what.split()[-1])
    return symbols


def check(bin_dir, first=150, span_limit=256 << 10):
    """Whether the first `first` listed functions of each daemon lie within `span_limit` bytes."""
    listed = open(OUTPUT).read().split()[:first]
    laid_out = True
    for daemon in ("phoned", "watchd"):
        addresses = {}
        for line in subprocess.check_output(["nm", os.path.join(bin_dir, daemon)], text=True).split("\n"):
            fields = line.split()
            if len(fields) == 3:
                addresses.setdefault(fields[2], int(fields[0], 16))
        found = [addresses[name] for name in listed if name in addresses]
        span = max(found) - min(found) if found else 0
        if len(found) < first // 2 or span > span_limit:
            print(f"{daemon}: the {first} hottest listed functions ({len(found)} found) span {span >> 10} KiB, "
                  f"not side by side", file=sys.stderr)
            laid_out = False
    return laid_out


def stale(bin_dir, first=150, limit=0.01):
    """Whether the list has gone stale: one of its `first` hottest functions, or more than
    `limit` of all, are no longer in either daemon (renamed, inlined or gone since it was
    written: a private function's symbol names its file, so moving one renames it)."""
    listed = open(OUTPUT).read().split()
    present = set()
    for daemon in ("phoned", "watchd"):
        for line in subprocess.check_output(["nm", os.path.join(bin_dir, daemon)], text=True).split("\n"):
            fields = line.split()
            if len(fields) == 3:
                present.add(fields[2])
    gone = [name for name in listed if name not in present]
    hot_gone = [name for name in listed[:first] if name not in present]
    if hot_gone or len(gone) > limit * len(listed):
        print(f"{len(gone)} of the {len(listed)} listed functions ({len(hot_gone)} of the {first} hottest) are not in "
              f"the daemons any more, e.g. {', '.join(hot_gone[:3] or gone[:3])}", file=sys.stderr)
        return True
    return False


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(0 if check(os.path.abspath(sys.argv[2])) else 1)
    if len(sys.argv) == 3 and sys.argv[1] == "--stale":
        sys.exit(1 if stale(os.path.abspath(sys.argv[2])) else 0)
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    bin_dir = os.path.abspath(sys.argv[1])
    messages = {name: count for name, _, _, count in WORKLOADS}
    messages.update({f"control message.send {size} B": CONTROL_SENDS for size in (132, 16384)})
    out_dir = tempfile.mkdtemp(prefix="wlhot-cg-", dir="/tmp")
    total = collections.Counter()
    workloads = collections.Counter()
    try:
        client = os.path.join(out_dir, "control_client")
        subprocess.run(["cc", "-O2", "-o", client, os.path.join(ROOT, "scripts", "bench", "control_client.c")], check=True)
        for daemon in ("phoned", "watchd"):
            for workload, path in profile(bin_dir, daemon, out_dir, client).items():
                for function, cost in self_costs(path, daemon).items():
                    per_message = cost / messages[workload]
                    if per_message >= 1:
                        total[function] += per_message
                        workloads[function] += 1
                print(f"{daemon}: {workload}", file=sys.stderr)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    shared = shared_section_symbols()
    symbols = sorted((f for f in total if not f.startswith("0x") and f not in shared), key=lambda f: (-workloads[f], -total[f], f))
    with open(OUTPUT, "w") as f:
        f.write("".join(s + "\n" for s in symbols))
    print(f"{len(symbols)} functions written to {os.path.relpath(OUTPUT, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()

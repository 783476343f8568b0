#!/usr/bin/env python3
"""Counts what each daemon does a message: instructions, allocations and system calls.

The figures of this table do not move with the host or with other work on it, where the
times of scripts/bench.sh do. One daemon runs under callgrind (valgrind) while the other runs
as usual; for each op the daemon's counters are dumped before, between and after two runs of
different lengths (N and 2N messages), and the difference of the two runs, divided by N, is
what one message costs, start-up and the op's own set-up left out. From the same dumps:
calls of malloc (and calloc, realloc, posix_memalign), of the Swift runtime's retain and
release ("rc", and of those the atomic ones: the release build's own code counts references
without a locked instruction, the statically linked standard library with one) and of the
libc wrappers of system calls, a message; and, for the APNs endpoint, phoned's instructions a
push by shared object (libnghttp2's own parse and answer apart from the rest).

Usage: python3 scripts/bench/instructions.py --bin BIN_DIR [--ops op,...] [--count N] [--json] [--keep DIR]
                                             [--top N] [--daemon-args "ARGS"]
  (BIN_DIR: a release build, scripts/build-release.sh; the C control client is compiled here)
  --top N prints under each row the N functions with the most instructions of their own a
  message (the same difference of the two runs; names demangled by `swift demangle` when it is
  on the PATH).
  --keep DIR keeps each daemon's dump of the run of 2N messages as DIR/OP-DAEMON.callgrind, to
  read line by line: callgrind_annotate DIR/rtt-data-64-phoned.callgrind SOURCE.swift ... (or
  by function and its callees with --inclusive=yes; on these dumps valgrind 3.19's listing by
  own cost puts every instruction under __libc_start_main, which --top does not).
  --daemon-args "ARGS" starts both daemons with these arguments as well: "--trace-entries 0"
  counts the same ops with the trace off (what the trace costs is the difference).
Ops: rtt-data-64, rtt-dict-132, rtt-data-16k, rtt-dict-16k, control-132, control-16k,
oneway-dict-132, oneway-data-16k, oneway-dict-16k, apns-h2c, apns-tls (the last two need h2load).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Pair, call  # noqa: E402

ROUND_TRIPS = {
    "rtt-data-64": {"size": 64, "kind": "data"},
    "rtt-dict-132": {"size": 64, "kind": "dictionary"},
    "rtt-data-16k": {"size": 16384, "kind": "data"},
    "rtt-dict-16k": {"size": 16384, "kind": "dictionary"},
}
ONE_WAY = {
    "oneway-dict-132": {"size": 64, "kind": "dictionary"},
    "oneway-data-16k": {"size": 16384, "kind": "data"},
    "oneway-dict-16k": {"size": 16384, "kind": "dictionary"},
}
CONTROL = {"control-132": 64, "control-16k": 16384}
APNS = ("apns-h2c", "apns-tls")
ALL = [*ROUND_TRIPS, *CONTROL, *ONE_WAY, *APNS]
ALLOCATORS = {"malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc"}
# The Swift runtime's reference counting entry points (a locked instruction each).
ATOMIC_REFERENCE_COUNTING = {"swift_retain", "swift_release", "swift_bridgeObjectRetain", "swift_bridgeObjectRelease",
                             "swift_unownedRetainStrong", "swift_retain_n", "swift_release_n"}
# What code compiled with -assume-single-threaded calls instead (the daemons' release build):
# the same work without the locked instruction.
REFERENCE_COUNTING = ATOMIC_REFERENCE_COUNTING | {name.replace("swift_", "swift_nonatomic_", 1) for name in ATOMIC_REFERENCE_COUNTING}
# The libc entry points of the system calls on the daemons' message path.
SYSCALLS = {"epoll_wait", "epoll_pwait", "recvmsg", "sendmsg", "read", "write", "recv", "send", "recvfrom",
            "sendto", "readv", "writev", "timerfd_settime", "epoll_ctl", "accept4", "fdatasync", "pwrite64", "pread64"}


def parse_callgrind(path):
    """Self instructions by shared object and by function, and calls of the allocators and
    system calls by name."""
    names = {}
    by_object = {}
    by_function = {}
    calls = {}
    total = 0
    obj = fn = cfn = None
    after_calls = False

    def name(kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?", text)
        if not m:
            return text
        key = (kind, m.group(1))
        if m.group(2) is not None:
            names[key] = m.group(2)
        return names.get(key, text)

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if after_calls:
                    after_calls = False
                    continue
                by_object[obj] = by_object.get(obj, 0) + cost
                by_function[fn] = by_function.get(fn, 0) + cost
                total += cost
                continue
            key, _, value = line.partition("=")
            if key == "ob":
                obj = name("ob", value)
            elif key == "fn":
                fn = name("fn", value)
            elif key == "cfn":
                cfn = name("fn", value)
            elif key in ("cob", "cfi", "cfl"):
                name("ob" if key == "cob" else "fl", value)
            elif key in ("fl", "fi", "fe"):
                name("fl", value)
            elif key == "calls":
                after_calls = True
                n = int(value.split()[0])
                short = re.sub(r"^(__GI_|__libc_|__)+", "", cfn or "")
                # A bridge object's retain or release calls the plain one: counted once.
                nested = short in REFERENCE_COUNTING and (fn or "").startswith(("swift_bridgeObject", "swift_nonatomic_bridgeObject"))
                if short in ALLOCATORS or short in SYSCALLS or (short in REFERENCE_COUNTING and not nested):
                    calls[short] = calls.get(short, 0) + n
    return total, by_object, calls, by_function


def poke(ctl, status):
    """Wakes the daemon with `status` until callgrind_control's request is handled: callgrind
    takes the request when the daemon next runs. The first poke waits for the request to be
    in place, so that every interval between two dumps holds one `status` (whose cost the
    difference of two intervals then cancels)."""
    time.sleep(0.5)
    while ctl.poll() is None:
        try:
            status()
        except (OSError, RuntimeError):
            pass
        time.sleep(1)


class Profiled:
    """A pair with one daemon under callgrind; `dump()` writes its counters since the last dump."""
    def __init__(self, bin_dir, daemon, extra=()):
        self.home = tempfile.mkdtemp(prefix="wli-", dir="/tmp")
        self.out = os.path.join(self.home, "callgrind.out")
        wrap = {daemon: ["valgrind", "--tool=callgrind", "--quiet", f"--callgrind-out-file={self.out}"]}
        self.pair = Pair(bin_dir, self.home, extra, wrap=wrap, start_timeout=120)
        self.daemon = daemon
        self.pid = self.pair.procs[daemon].pid
        self.dumps = 0

    def dump(self):
        """Dumps the counters (callgrind_control; the daemon handles the request when it next
        runs, so it is poked with `status` until it has) and returns the parsed dump."""
        before = set(os.listdir(self.home))
        ctl = subprocess.Popen(["callgrind_control", "-d", str(self.pid)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        control = self.pair.phone if self.daemon == "phoned" else self.pair.watch
        poke(ctl, lambda: call(control, "status", timeout=30))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            new = [n for n in set(os.listdir(self.home)) - before if n.startswith("callgrind.out")]
            if new:
                path = os.path.join(self.home, new[0])
                time.sleep(0.2)
                self.last = path
                return parse_callgrind(path)
            time.sleep(0.05)
        raise RuntimeError("callgrind_control: no dump appeared")

    def stop(self):
        self.pair.stop()
        shutil.rmtree(self.home, ignore_errors=True)


def per_message(first, second, n):
    """(second - first) / n of the parsed dumps of a run of n and one of 2n messages."""
    total = (second[0] - first[0]) / n
    objects = {k: (second[1].get(k, 0) - first[1].get(k, 0)) / n for k in set(first[1]) | set(second[1])}
    calls = {k: (second[2].get(k, 0) - first[2].get(k, 0)) / n for k in set(first[2]) | set(second[2])}
    functions = {k: (second[3].get(k, 0) - first[3].get(k, 0)) / n for k in set(first[3]) | set(second[3])}
    return {"instructions": total, "objects": objects, "calls": calls, "functions": functions}


def demangled(names):
    """Swift's symbols as `swift demangle --simplified` reads them (others as they are); the
    names themselves when it is not on the PATH."""
    if not shutil.which("swift"):
        return {name: name for name in names}
    result = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names) + "\n",
                            capture_output=True, text=True)
    lines = result.stdout.splitlines()
    if result.returncode != 0 or len(lines) != len(names):
        return {name: name for name in names}
    return dict(zip(names, lines))


def measure(bin_dir, ref_dir, daemon, op, n, keep=None, extra=()):
    p = Profiled(bin_dir, daemon, extra)
    try:
        if op in ROUND_TRIPS or op in CONTROL:
            call(p.pair.watch, "replies.set", {"mode": "echo"})
        else:
            call(p.pair.watch, "replies.set", {"mode": "empty"})

        def run(count):
            if op in ROUND_TRIPS:
                call(p.pair.phone, "bench.roundTrip", {**ROUND_TRIPS[op], "count": count}, timeout=1200)
            elif op in ONE_WAY:
                call(p.pair.phone, "bench.oneWay", {**ONE_WAY[op], "count": count}, timeout=1200)
            else:
                subprocess.check_output([os.path.join(ref_dir, "control_client"), "rtt", p.pair.phone,
                                         str(CONTROL[op]), str(count)], timeout=1200)

        run(max(10, n // 10))  # warm-up: caches, pools and buffers at their steady sizes
        p.dump()
        run(n)
        first = p.dump()
        run(2 * n)
        second = p.dump()
        if keep:
            shutil.copy(p.last, os.path.join(keep, f"{op}-{daemon}.callgrind"))
        return per_message(first, second, n)
    finally:
        p.stop()


def measure_apns(bin_dir, n, op, keep=None, extra=()):
    """phoned's instructions a push under h2load (h2c or TLS, the production endpoint, as the bench)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import apns
    home = tempfile.mkdtemp(prefix="wlia-", dir="/tmp")
    out = os.path.join(home, "callgrind.out")
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--quiet", f"--callgrind-out-file={out}",
                             os.path.join(bin_dir, "phoned"), "--home", home, "--log-level", "warning", *extra],
                            stderr=open(os.path.join(home, "phoned.log"), "w"))
    try:
        from run import wait_ready
        ctl = os.path.join(home, "phone.ctl")
        wait_ready(ctl, time.monotonic() + 120)
        h2c, tls, headers, payload = apns.prepare(lambda name, args=None: call(ctl, name, args), home)
        url = tls if op == "apns-tls" else h2c

        def load(count):
            cmd = ["h2load", "-n", str(count), "-c", "10", "-m", "10", "-d", payload]
            for h in headers:
                cmd += ["-H", h]
            subprocess.run(cmd + [url], capture_output=True, timeout=1200, check=True)

        def dump():
            before = set(os.listdir(home))
            ctl_proc = subprocess.Popen(["callgrind_control", "-d", str(proc.pid)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
            poke(ctl_proc, lambda: call(ctl, "status", timeout=30))
            for _ in range(600):
                new = [x for x in set(os.listdir(home)) - before if x.startswith("callgrind.out")]
                if new:
                    time.sleep(0.2)
                    dumps.append(os.path.join(home, new[0]))
                    return parse_callgrind(dumps[-1])
                time.sleep(0.05)
            raise RuntimeError("no dump")

        dumps = []
        load(max(100, n // 10))
        dump()
        load(n)
        first = dump()
        load(2 * n)
        second = dump()
        if keep:
            shutil.copy(dumps[-1], os.path.join(keep, f"{op}-phoned.callgrind"))
        return per_message(first, second, n)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(home, ignore_errors=True)


def short_object(path):
    base = os.path.basename(path or "?")
    return re.sub(r"\.so.*$", "", base)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--ops", default=",".join(ALL))
    parser.add_argument("--count", type=int, default=2000, help="N: runs of N and 2N messages (pushes: 10 N)")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON too")
    parser.add_argument("--keep", metavar="DIR", help="keep the dumps of the runs of 2N messages in DIR")
    parser.add_argument("--top", type=int, default=0, metavar="N",
                        help="print the N functions with the most instructions of their own a message")
    parser.add_argument("--daemon-args", default="", metavar="ARGS",
                        help='more arguments for both daemons, e.g. "--trace-entries 0"')
    a = parser.parse_args()
    extra = a.daemon_args.split()
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    ops = a.ops.split(",")
    unknown = [o for o in ops if o not in ALL]
    if unknown:
        parser.error(f"unknown ops {unknown}; ops: {', '.join(ALL)}")
    ref = tempfile.mkdtemp(prefix="wlir-", dir="/tmp")
    results = {}
    try:
        if any(o in CONTROL for o in ops):
            subprocess.check_call(["cc", "-O2", "-o", os.path.join(ref, "control_client"),
                                   os.path.join(os.path.dirname(os.path.abspath(__file__)), "control_client.c")])
        for op in ops:
            if op in APNS:
                results[op] = {"phoned": measure_apns(a.bin, 10 * a.count, op, a.keep, extra)}
                continue
            results[op] = {d: measure(a.bin, ref, d, op, a.count, a.keep, extra) for d in ("phoned", "watchd")}
    finally:
        shutil.rmtree(ref, ignore_errors=True)

    print(f"{'op':16} {'daemon':7} {'instr/msg':>10} {'malloc/msg':>10} {'rc/msg':>7} {'atomic':>7} {'syscalls/msg':>12}  system calls a message")
    print("-" * 100)
    for op, by_daemon in results.items():
        for daemon, r in by_daemon.items():
            allocs = sum(v for k, v in r["calls"].items() if k in ALLOCATORS)
            counting = sum(v for k, v in r["calls"].items() if k in REFERENCE_COUNTING)
            atomic = sum(v for k, v in r["calls"].items() if k in ATOMIC_REFERENCE_COUNTING)
            sys_calls = {k: v for k, v in r["calls"].items() if k in SYSCALLS and v >= 0.005}
            detail = " ".join(f"{k} {v:.2f}" for k, v in sorted(sys_calls.items()))
            print(f"{op:16} {daemon:7} {r['instructions']:10.0f} {allocs:10.2f} {counting:7.1f} {atomic:7.1f} {sum(sys_calls.values()):12.2f}  {detail}")
            if op in APNS:
                objs = sorted(((v, short_object(k)) for k, v in r["objects"].items() if v >= 50), reverse=True)
                print("    by object: " + ", ".join(f"{name} {v:.0f}" for v, name in objs))
            if a.top > 0:
                top = sorted(((v, k or "?") for k, v in r["functions"].items()), reverse=True)[:a.top]
                names = demangled([k for _, k in top])
                for v, k in top:
                    print(f"    {v:9.0f} {100 * v / r['instructions']:5.1f}%  {names[k][:150]}")
    if a.json:
        for by_daemon in results.values():
            for r in by_daemon.values():
                functions = r.pop("functions")
                if a.top > 0:
                    r["functions"] = dict(sorted(functions.items(), key=lambda item: -item[1])[:a.top])
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())

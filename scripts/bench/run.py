#!/usr/bin/env python3
"""Runs WatchLink's benchmarks beside their references and prints one table.

Every figure is measured in this run, next to the reference it is compared with:
the C program over an AF_UNIX socket pair (the physical limit of the link) and SQLite
WAL commits on the same disk (the limit of durable transfers).
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import socket
import subprocess
import sys
import tempfile
import time


def call(path, op, args=None, timeout=300):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall((json.dumps({"id": 1, "op": op, "args": args or {}}) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError(f"{op}: connection closed")
            data += chunk
    response = json.loads(data)
    if not response.get("ok"):
        raise RuntimeError(f"{op}: {response.get('error')}")
    return response["result"]


def wait_ready(path, deadline):
    while time.monotonic() < deadline:
        try:
            return call(path, "status", timeout=1)
        except (OSError, RuntimeError):
            time.sleep(0.0005)
    raise RuntimeError(f"{path} did not answer status")


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run_json(cmd, cpus=None):
    """Runs a reference program; with `cpus`, it and its child run on those cores only."""
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    return json.loads(subprocess.check_output(cmd, text=True, preexec_fn=pin))


def pin_process(pid, cpus):
    """Sets the cores every thread of a running process may use."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except ProcessLookupError:
            pass


class Pair:
    """phoned and watchd on `home`, activated and linked. `wrap` names a command to run a
    daemon under (valgrind for a profile), which may need a longer `start_timeout`."""
    def __init__(self, bin_dir, home, extra=(), wrap=None, start_timeout=10):
        self.home = home
        self.procs = {}
        for name in ("phoned", "watchd"):
            self.procs[name] = subprocess.Popen(
                [*(wrap or {}).get(name, ()), os.path.join(bin_dir, name), "--home", home, "--activate",
                 "--log-level", "warning", *extra],
                stderr=open(os.path.join(home, name + ".log"), "w"))
        self.phone = os.path.join(home, "phone.ctl")
        self.watch = os.path.join(home, "watch.ctl")
        deadline = time.monotonic() + start_timeout
        try:
            wait_ready(self.phone, deadline)
            wait_ready(self.watch, deadline)
            while time.monotonic() < deadline:
                if call(self.phone, "status")["isReachable"]:
                    break
                time.sleep(0.005)
            else:
                raise RuntimeError("the pair did not become reachable")
        except BaseException:
            self.stop()
            raise

    def stop(self):
        for proc in self.procs.values():
            proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def in_turn(pairs, round):
    """The pairs in the order they run in `round`: one first, then the other."""
    items = list(pairs.items())
    return items if round % 2 == 0 else items[::-1]


def trace_cost(bin_dir, row, scale):
    """The trace's cost (docs/trace.md): the same figures from a pair with the trace on (the
    default ring of 10,000 entries) and one with it off (--trace-entries 0), measured
    alternately, the best of each kept; printed side by side, the target is within 10%.
    The pair that goes first alternates from round to round: the second of two runs was
    about 5% faster at durable transfers (two pairs both with the trace on read 0.92-1.00).
    Under each row, the median of each round's own on/off ratio: the bests are each one run,
    which one lucky run moves; where the two disagree by more than a few percent, the host
    was too noisy for the row."""

    def compare(rounds, op, args, key, label, unit, better, target):
        """Runs `op` on both pairs in turn for `rounds` rounds and prints the row of the bests
        and, under it, the paired median."""
        best = {}
        paired = []
        pick = min if better == "lower" else max
        for round in range(rounds):
            got = {}
            for state, pair in in_turn(pairs, round):
                got[state] = call(pair.phone, op, args)[key]
                best[state] = pick(best.get(state, got[state]), got[state])
            paired.append(got["on"] / got["off"])
        row(label, best["on"], unit, best["off"], better=better, target=target)
        row("  paired: median of the rounds' own on/off, in %", 100 * statistics.median(paired), "%")

    homes = {state: tempfile.mkdtemp(prefix=f"wlt{state}-", dir="/tmp") for state in ("on", "off")}
    pairs = {}
    try:
        pairs["on"] = Pair(bin_dir, homes["on"])
        pairs["off"] = Pair(bin_dir, homes["off"], ["--trace-entries", "0"])
        for pair in pairs.values():
            call(pair.watch, "replies.set", {"mode": "echo"})
        cpus = {min(os.sched_getaffinity(0))}
        for pair in pairs.values():
            for proc in pair.procs.values():
                pin_process(proc.pid, cpus)
        for pair in pairs.values():
            call(pair.phone, "bench.roundTrip", {"size": 64, "count": 500, "kind": "dictionary"})  # warm-up
        compare(10, "bench.roundTrip", {"size": 64, "count": int(2000 * scale), "kind": "dictionary"}, "p50Us",
                "trace on vs off: round trip p50, dictionary", "us", "lower", "<= 1.10x")
        for pair in pairs.values():
            for proc in pair.procs.values():
                pin_process(proc.pid, os.sched_getaffinity(0))
            call(pair.watch, "replies.set", {"mode": "empty"})
        # Both daemons busy on two cores: the figure moves by 5-10% from run to run, so the
        # best of twelve.
        compare(12, "bench.oneWay", {"size": 64, "count": int(200000 * scale), "kind": "dictionary"}, "messagesPerSecond",
                "trace on vs off: one-way messages/s, dictionary", "msg/s", "higher", ">= 0.90x")
        # Durable transfers wait on the disk and move by about 10% from run to run, more than
        # the trace costs them (2-3% of the daemons' instructions): eight rounds each.
        compare(8, "bench.userInfo", {"count": int(100000 * scale), "size": 100}, "transfersPerSecond",
                "trace on vs off: userInfo transfers/s", "xfer/s", "higher", ">= 0.90x")
    finally:
        for pair in pairs.values():
            pair.stop()
        for home in homes.values():
            shutil.rmtree(home, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--ref", required=True)
    parser.add_argument("--quick", action="store_true")
    a = parser.parse_args()
    scale = 0.2 if a.quick else 1.0
    rows = []

    def row(name, value, unit, reference=None, ref_unit=None, better="lower", target=None):
        ratio = None
        if reference:
            ratio = value / reference if better == "lower" else value / reference
        rows.append((name, value, unit, reference, ratio, target))

    home = tempfile.mkdtemp(prefix="wlb-", dir="/tmp")
    try:
        uf = os.path.join(a.ref, "unix_frames")
        sq = os.path.join(a.ref, "sqlite_commits")
        # Round trips: many short runs, alternating with the reference's (see below).
        n_rtt = int(2000 * scale)

        # Start to ready and SIGTERM to exit, of each daemon (the tests only check that they
        # happen; how fast is measured here).
        for name, control in (("phoned", "phone.ctl"), ("watchd", "watch.ctl")):
            starts, stops = [], []
            for _ in range(5):
                h = tempfile.mkdtemp(prefix="wls-", dir="/tmp")
                t0 = time.monotonic()
                p = subprocess.Popen([os.path.join(a.bin, name), "--home", h, "--log-level", "warning"])
                try:
                    wait_ready(os.path.join(h, control), time.monotonic() + 10)
                    starts.append((time.monotonic() - t0) * 1000)
                    t0 = time.monotonic()
                    p.send_signal(signal.SIGTERM)
                    p.wait(10)
                    stops.append((time.monotonic() - t0) * 1000)
                finally:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
                    shutil.rmtree(h, ignore_errors=True)
            starts.sort()
            stops.sort()
            row(f"{name} start to first status (median of 5)", starts[2], "ms", target="< 150 ms" if name == "phoned" else "< 1000 ms")
            row(f"{name} SIGTERM to exit (median of 5)", stops[2], "ms", target="< 1000 ms")

        # The handshake timer: half a frame, then silence, until the GOAWAY (the timeout is 5 s).
        h = tempfile.mkdtemp(prefix="wlh-", dir="/tmp")
        p = subprocess.Popen([os.path.join(a.bin, "phoned"), "--home", h, "--log-level", "warning"])
        try:
            wait_ready(os.path.join(h, "phone.ctl"), time.monotonic() + 10)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(60)
                s.connect(os.path.join(h, "link.sock"))
                t0 = time.monotonic()
                s.sendall(bytes([0, 0, 0, 64, 0x01, 0x57, 0x4C]))
                while s.recv(4096):
                    pass
                row("handshake timeout: half a frame to GOAWAY", (time.monotonic() - t0) * 1000, "ms", target="5000-7000 ms")
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(10)
            shutil.rmtree(h, ignore_errors=True)

        # Memory: idle, then 100,000 messages through a fresh pair (no leak).
        pair = Pair(a.bin, home)
        try:
            idle = {n: rss_mib(p.pid) for n, p in pair.procs.items()}
            for name in pair.procs:
                row(f"{name} idle RSS", idle[name], "MiB", target="< 20 MiB")
            call(pair.phone, "bench.oneWay", {"size": 64, "count": 100000, "kind": "dictionary"})
            for name, proc in pair.procs.items():
                row(f"{name} RSS growth after 100,000 messages", rss_mib(proc.pid) - idle[name], "MiB",
                    target="< 5 MiB")
        finally:
            pair.stop()
        shutil.rmtree(home, ignore_errors=True)
        os.mkdir(home)

        pair = Pair(a.bin, home)
        try:
            # Each figure and its reference are measured alternately and the best of each is
            # kept: other work on the machine only ever makes a run slower. Round trips go in
            # twenty short runs of 2,000 each: this VM has slow spells of tens of milliseconds
            # to seconds, which lift the median of a long run; short runs find the quiet moments
            # for both programs alike. The rows take their runs in turn, one run of each row per
            # round, so that a row's twenty runs spread over the whole ten seconds of the loop:
            # when each row took its twenty runs one after the other (1.5 s), a spell could
            # cover all of them and none of a neighbouring reference's best (the 16 KiB data
            # row read 1.34x in one of fourteen repetitions, 1.11-1.17x in the others; in turn,
            # 1.14-1.15x in eight of eight). Throughput is measured eight times, in runs of a few
            # tenths of a second: what is sustained, not a burst. Both daemons are busy then,
            # so a slow spell on either core slows WatchLink, where the reference's reader
            # has time to spare: five runs were sometimes all caught in one.
            call(pair.watch, "replies.set", {"mode": "echo"})
            # Round trips on one core, both daemons and both processes of the reference: a
            # wake-up across cores of a VM is a trip through the hypervisor that costs the same
            # for both and varies by a factor of five between runs, and left free the scheduler
            # keeps the two daemons on one core once they are there but spreads the reference's
            # freshly forked pair, so free placement compares nothing.
            cpus = {min(os.sched_getaffinity(0))}
            for proc in pair.procs.values():
                pin_process(proc.pid, cpus)
            sizes = (64, 16384)
            kinds = ("data", "dictionary")
            # The user's path: a minimal C client sends message.send (a 10-key dictionary, a
            # reply wanted) on phoned's control socket: JSON in, a property list to watchd, the
            # echoed reply back as JSON. Two of the reference's round trips are its physical
            # limit (client to phoned, phoned to watchd and back); the C relay (the same three
            # processes, each middle one waiting in epoll_wait and passing bytes on) is the
            # limit of the path's shape.
            ctl_client = os.path.join(a.ref, "control_client")
            for size in sizes:
                for kind in kinds:
                    call(pair.phone, "bench.roundTrip", {"size": size, "count": 500, "kind": kind})  # warm-up
                run_json([ctl_client, "rtt", pair.phone, str(size), "200"], cpus)  # warm-up
            fastest = {}

            def keep(key, result):
                if key not in fastest or result["p50Us"] < fastest[key]["p50Us"]:
                    fastest[key] = result

            for _ in range(20):
                for size in sizes:
                    for kind in kinds:
                        keep(("daemons", size, kind),
                             call(pair.phone, "bench.roundTrip", {"size": size, "count": n_rtt, "kind": kind}))
                        keep(("rtt", size, kind), run_json([uf, "rtt", str(size), str(n_rtt)], cpus))
                    # What the reference leaves out and the daemons have: a wait in epoll_wait
                    # and one read of the frame (the reference's echo blocks in a read of the
                    # length, then of the payload). Shown beside the reference, it tells how
                    # much of a round trip row's distance from 1.0x is WatchLink's own work.
                    keep(("rtt-epoll", size), run_json([uf, "rtt-epoll", str(size), str(n_rtt)], cpus))
                    # Both ends wait in epoll_wait and read what has come in one read, as the
                    # two daemons do: all the system calls of their round trip, none of their work.
                    keep(("rtt-evented", size), run_json([uf, "rtt-evented", str(size), str(n_rtt)], cpus))
                    keep(("control", size), run_json([ctl_client, "rtt", pair.phone, str(size), str(n_rtt // 2)], cpus))
                    keep(("rtt", size, "control"), run_json([uf, "rtt", str(size), str(n_rtt)], cpus))
                    keep(("relay", size), run_json([uf, "relay", str(size), str(n_rtt // 2)], cpus))

            # The targets: the round trip of data within 2.0x of the reference at 64 B and 1.2x
            # at 16 KiB, of a dictionary within 1.4x at 132 B and 1.8x at 16 KiB.
            targets = {(64, "data"): "<= 2.0x", (16384, "data"): "<= 1.2x",
                       (64, "dictionary"): "<= 1.4x", (16384, "dictionary"): "<= 1.8x"}
            for size in sizes:
                for kind in kinds:
                    r, c = fastest[("daemons", size, kind)], fastest[("rtt", size, kind)]
                    row(f"round trip p50, {kind} {r['bytes']} B", r["p50Us"], "us", c["p50Us"], target=targets[(size, kind)])
                    row(f"round trip p99, {kind} {r['bytes']} B", r["p99Us"], "us", c["p99Us"])
                ref = fastest[("rtt", size, "data")]["p50Us"]
                row(f"  reference: C epoll echo round trip p50, {size} B", fastest[("rtt-epoll", size)]["p50Us"], "us", ref)
                row(f"  reference: C evented round trip p50, {size} B", fastest[("rtt-evented", size)]["p50Us"], "us", ref)
            for size in sizes:
                label = "132 B" if size == 64 else "16 KiB"
                ref = 2 * fastest[("rtt", size, "control")]["p50Us"]
                row(f"control message.send round trip p50, {label}", fastest[("control", size)]["p50Us"], "us", ref,
                    target="<= 1.5x" if size == 64 else None)
                row(f"  reference: C relay round trip p50, {label}", fastest[("relay", size)]["p50Us"], "us", ref)

            # Throughput with free placement: both daemons, and the reference's two processes,
            # keep a core busy each.
            for proc in pair.procs.values():
                pin_process(proc.pid, os.sched_getaffinity(0))
            call(pair.watch, "replies.set", {"mode": "empty"})
            for size, count in ((64, int(200000 * scale)), (16384, int(50000 * scale))):
                for kind in ("data", "dictionary"):
                    best, ref = None, None
                    for _ in range(8):
                        r = call(pair.phone, "bench.oneWay", {"size": size, "count": count, "kind": kind})
                        c = run_json([uf, "oneway", str(size), str(count)])
                        best = max(best or 0, r["messagesPerSecond"])
                        ref = max(ref or 0, c["framesPerSecond"])
                    target = {(64, "data"): ">= 40%", (16384, "data"): ">= 70%",
                              (64, "dictionary"): ">= 55%", (16384, "dictionary"): ">= 50%"}[(size, kind)]
                    row(f"one-way messages/s, {kind} {r['bytes']} B", best, "msg/s", ref, better="higher", target=target)

            n_ui = int(100000 * scale)
            single = run_json([sq, os.path.join(home, "phone"), str(int(3000 * scale)), "1"])
            grouped = run_json([sq, os.path.join(home, "phone"), str(int(128000 * scale)), "64"])
            best = 0
            for _ in range(5):
                r = call(pair.phone, "bench.userInfo", {"count": n_ui, "size": 100})
                best = max(best, r["transfersPerSecond"])
            row("userInfo end to end, durable, transfers/s", best, "xfer/s",
                grouped["rowsPerSecond"], better="higher", target=">= 50,000/s")
            # The same through the control socket: userInfo.transfer pipelined by the C client,
            # answered once committed; end to end once phoned has every acknowledgement.
            ctl = {"acceptedPerSecond": 0, "endToEndPerSecond": 0}
            for _ in range(3):
                r = run_json([os.path.join(a.ref, "control_client"), "userinfo", pair.phone, "100", str(int(20000 * scale))])
                ctl = {k: max(ctl[k], r[k]) for k in ctl}
            row("control userInfo.transfer pipelined, accepted/s", ctl["acceptedPerSecond"], "xfer/s",
                grouped["rowsPerSecond"], better="higher")
            row("control userInfo.transfer pipelined, end to end/s", ctl["endToEndPerSecond"], "xfer/s",
                grouped["rowsPerSecond"], better="higher")
            row("  reference: SQLite single-row commits/s", single["commitsPerSecond"], "commit/s")
            row("  reference: SQLite 64-row group commits, rows/s", grouped["rowsPerSecond"], "rows/s")
        finally:
            pair.stop()

        trace_cost(a.bin, row, scale)

        if shutil.which("h2load") and shutil.which("nghttpd"):
            sys.path.insert(0, os.path.dirname(__file__))
            import apns
            apns.run(a.bin, call, wait_ready, row, int(100000 * scale))
        else:
            print("bench: h2load or nghttpd missing: no APNs rows (scripts/ensure-deps.sh installs them)", file=sys.stderr)
    finally:
        shutil.rmtree(home, ignore_errors=True)

    print()
    print(f"{'figure':52} {'WatchLink':>12} {'reference':>12} {'ratio':>7}  target")
    print("-" * 100)
    for name, value, unit, reference, ratio, target in rows:
        ref = f"{reference:12.1f}" if reference else " " * 12
        rat = f"{ratio:6.2f}x" if ratio else " " * 7
        print(f"{name:52} {value:12.1f} {ref} {rat}  {unit:8} {target or ''}")


if __name__ == "__main__":
    sys.exit(main())

"""The APNs endpoint under h2load, beside nghttpd serving a small file in the same run.

The provider token is made with the openssl command (ES256, DER signature, which the
endpoint accepts), so the benchmark needs no Python package."""
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def provider_token(key_id, team_id, private_key_pem, directory):
    key_path = os.path.join(directory, "key.pem")
    with open(key_path, "w") as f:
        f.write(private_key_pem)
    signing_input = b64url(json.dumps({"alg": "ES256", "kid": key_id}).encode()) + "." + \
        b64url(json.dumps({"iss": team_id, "iat": int(time.time())}).encode())
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key_path], input=signing_input.encode(),
                               capture_output=True, check=True).stdout
    return signing_input + "." + b64url(signature)


def prepare(call, home):
    """Configures the endpoint of the phoned whose control ops `call` runs for the load: the
    h2c and TLS URLs, the request's headers and the path of its payload (written in `home`)."""
    # h2load opens its ten streams a connection at once and does not retry the ones APNs'
    # one-stream rule refuses (real clients send one request first, or retry): the rule is
    # turned off for the load, the per-connection token checks and the store stay in the path.
    # The load goes to the production endpoint, where providers send it: the development one
    # adds apns-unique-id to every answer, as APNs does (about 14% more work a push).
    call("push.config", {"bundleId": "com.example.files", "teamId": "TEAM123456", "oneStreamUntilAuthenticated": False,
                         "environment": "production"})
    token = call("push.register", {"types": ["fileProvider"]})["token"]
    key = call("push.keys.create")
    port = call("push.endpoint")["environments"]["production"]["port"]
    jwt = provider_token(key["keyId"], "TEAM123456", key["privateKeyPEM"], home)
    payload = os.path.join(home, "payload.json")
    with open(payload, "w") as f:
        json.dump({"container-identifier": "NSFileProviderRootContainerItemIdentifier", "domain": "main"}, f)
    headers = [f"authorization: bearer {jwt}", "apns-topic: com.example.files.pushkit.fileprovider",
               "apns-push-type: fileprovider"]
    return f"http://127.0.0.1:{port}/3/device/{token}", f"https://127.0.0.1:{port}/3/device/{token}", headers, payload


def h2load(url, n, headers=(), data=None, extra=()):
    """Requests/s, how many succeeded, and the p50 and p99 request times in ms (from
    h2load's per-request log)."""
    with tempfile.NamedTemporaryFile(prefix="wlh2-", dir="/tmp") as log:
        cmd = ["h2load", "-n", str(n), "-c", "10", "-m", "10", f"--log-file={log.name}", *extra]
        for header in headers:
            cmd += ["-H", header]
        if data:
            cmd += ["-d", data]
        out = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=300).stdout
        times = sorted(int(line.split("\t")[2]) for line in open(log.name) if line.count("\t") >= 2)
    rate = float(re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", out).group(1))
    ok = int(re.search(r"(\d+) succeeded", out).group(1))
    p50 = times[len(times) // 2] / 1000 if times else 0.0
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] / 1000 if times else 0.0
    return rate, ok, (p50, p99)


def status_latency_during(control_call, stop):
    """Times `status` on the control socket while the load runs; the sorted samples in ms."""
    samples = []
    while not stop.is_set():
        t0 = time.monotonic()
        control_call("status")
        samples.append((time.monotonic() - t0) * 1000)
        time.sleep(0.005)
    return sorted(samples)


def run(bin_dir, call, wait_ready, row, n):
    home = tempfile.mkdtemp(prefix="wla-", dir="/tmp")
    proc = subprocess.Popen([os.path.join(bin_dir, "phoned"), "--home", home, "--log-level", "warning"],
                            stderr=open(os.path.join(home, "phoned.log"), "w"))
    ng_dir = tempfile.mkdtemp(prefix="wln-", dir="/tmp")
    nghttpd = None
    try:
        ctl = os.path.join(home, "phone.ctl")
        wait_ready(ctl, time.monotonic() + 10)
        h2c, tls, headers, payload = prepare(lambda op, args=None: call(ctl, op, args), home)
        with open(os.path.join(ng_dir, "f"), "w") as f:
            f.write("{}")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ng_port = s.getsockname()[1]
        nghttpd = subprocess.Popen(["nghttpd", "--no-tls", "-d", ng_dir, "--address=127.0.0.1", str(ng_port)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", ng_port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.02)

        best = {"h2c": (0, ""), "tls": (0, ""), "ref": (0, "")}
        status_samples = []
        for _ in range(3):
            stop = threading.Event()
            result = {}
            watcher = threading.Thread(target=lambda: result.setdefault("s", status_latency_during(lambda op: call(ctl, op), stop)))
            watcher.start()
            rate, ok, times = h2load(h2c, n, headers, payload)
            stop.set()
            watcher.join()
            status_samples += result["s"]
            assert ok == n, f"{ok} of {n} pushes succeeded"
            best["h2c"] = max(best["h2c"], (rate, times))
            rate, ok, times = h2load(tls, n, headers, payload)
            assert ok == n, f"{ok} of {n} TLS pushes succeeded"
            best["tls"] = max(best["tls"], (rate, times))
            rate, ok, times = h2load(f"http://127.0.0.1:{ng_port}/f", n)
            best["ref"] = max(best["ref"], (rate, times))
        ref = best["ref"][0]
        row("APNs pushes/s, h2c, h2load 10 conn x 10 streams", best["h2c"][0], "req/s", ref, better="higher", target=">= 0.5x")
        row("APNs pushes/s, TLS, h2load 10 conn x 10 streams", best["tls"][0], "req/s", ref, better="higher", target=">= 0.4x")
        row("APNs request time p50, h2c", best["h2c"][1][0], "ms", best["ref"][1][0])
        row("APNs request time p99, h2c", best["h2c"][1][1], "ms", best["ref"][1][1], target="< 2 ms")
        if status_samples:
            p99 = status_samples[min(len(status_samples) - 1, int(len(status_samples) * 0.99))]
            row("control status during the APNs load, p99", p99, "ms", target="< 2 ms")
    finally:
        if nghttpd:
            nghttpd.terminate()
            nghttpd.wait(5)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(ng_dir, ignore_errors=True)

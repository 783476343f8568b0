"""Fixtures for the push tests: a phoned with its APNs endpoint, a control client, an event
stream, and provider tokens signed with `cryptography` / PyJWT (not WatchLink's code)."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

import jwt
import pytest

BIN_DIR = os.environ.get("WATCHLINK_BIN_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".build", "debug"))
BUNDLE_ID = "com.example.files"
TEAM_ID = "TEAM123456"
TOPIC = BUNDLE_ID + ".pushkit.fileprovider"


class Control:
    """A JSON-lines client of phone.ctl."""

    def __init__(self, path, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 1
        self.events = []

    def _line(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("control socket closed")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def call(self, op, **args):
        request_id = self.next_id
        self.next_id += 1
        self.sock.sendall(json.dumps({"id": request_id, "op": op, "args": args}).encode() + b"\n")
        while True:
            message = self._line()
            if "event" in message:
                self.events.append(message)
                continue
            if message.get("id") != request_id:
                continue
            if not message["ok"]:
                raise ControlError(message["error"])
            return message["result"]

    def wait_event(self, name, predicate=lambda data: True, timeout=5):
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event["event"] == name and predicate(event["data"]):
                    del self.events[index]
                    return event["data"]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {name} event within {timeout} s; saw {[e['event'] for e in self.events]}")
            self.sock.settimeout(remaining)
            try:
                message = self._line()
            except socket.timeout:
                continue
            finally:
                self.sock.settimeout(10)
            if "event" in message:
                self.events.append(message)

    def close(self):
        self.sock.close()


class ControlError(Exception):
    def __init__(self, error):
        super().__init__(f"{error['domain']} {error['code']} {error['name']}: {error['message']}")
        self.error = error


def daemon_environment():
    """The environment of a spawned daemon: LSAN_OPTIONS from WATCHLINK_DAEMON_LSAN_OPTIONS when
    set (scripts/test.sh --sanitize address checks the daemons for leaks)."""
    environment = dict(os.environ)
    if "WATCHLINK_DAEMON_LSAN_OPTIONS" in environment:
        environment["LSAN_OPTIONS"] = environment["WATCHLINK_DAEMON_LSAN_OPTIONS"]
    return environment


def stop_process(process, timeout=30):
    """SIGTERM to `process` (by its pid), SIGKILL if it is still running after `timeout` s;
    returns its exit status (negative: the signal that ended it)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)
    return process.returncode


class Phoned:
    def __init__(self, home, extra=()):
        self.home = home
        self.extra = list(extra)
        self.process = None
        self.log_path = os.path.join(home, "phoned.log")

    def start(self):
        """Starts phoned and waits until it answers; stops it again if it never does."""
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [os.path.join(BIN_DIR, "phoned"), "--home", self.home, "--log-level", "debug", *self.extra],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=daemon_environment())
        try:
            return self._wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_until_ready(self):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"phoned exited with {self.process.returncode}:\n{self.log()}")
            try:
                control = Control(os.path.join(self.home, "phone.ctl"), timeout=2)
                control.call("status")
                control.close()
                return self
            except (OSError, ConnectionError):
                time.sleep(0.01)
        raise RuntimeError(f"phoned not ready:\n{self.log()}")

    def control(self):
        return Control(os.path.join(self.home, "phone.ctl"))

    def log(self):
        try:
            with open(self.log_path, "r", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def stop(self):
        """Stops phoned (SIGTERM, then SIGKILL after 30 s); its exit status, None if never started."""
        return None if self.process is None else stop_process(self.process)

    def assert_clean_exit(self):
        """Stops phoned and fails unless it exited 0: under a sanitizer a leak or error report
        makes the exit status non-zero (the report is in the log)."""
        status = self.stop()
        assert status in (None, 0), f"phoned exited with {status}; log tail:\n{self.log()[-4000:]}"


class Device:
    """A started phoned, registered for fileProvider pushes, with a provider key."""

    def __init__(self, phoned):
        self.phoned = phoned
        self.control = phoned.control()
        self.events = phoned.control()
        self.events.call("events.subscribe")
        self.control.call("push.config", bundleId=BUNDLE_ID, teamId=TEAM_ID, tokenUpdateIntervalSeconds=0)
        key = self.control.call("push.keys.create")
        self.key_id = key["keyId"]
        self.private_key_pem = key["privateKeyPEM"]
        self.token = self.control.call("push.register", types=["fileProvider"])["token"]
        self.endpoint = self.control.call("push.endpoint")

    @property
    def url(self):
        return self.endpoint["url"]

    @property
    def h2c_url(self):
        return self.endpoint["h2cUrl"]

    @property
    def ca_file(self):
        return self.endpoint["caFile"]

    def jwt(self, iat=None, key_id=None, team_id=TEAM_ID, private_key_pem=None):
        return jwt.encode({"iss": team_id, "iat": int(time.time()) if iat is None else iat},
                          private_key_pem or self.private_key_pem, algorithm="ES256",
                          headers={"kid": key_id or self.key_id})

    def headers(self, **overrides):
        headers = {"authorization": f"bearer {self.jwt()}", "apns-topic": TOPIC, "apns-push-type": "fileprovider"}
        for name, value in overrides.items():
            name = name.replace("_", "-")
            if value is None:
                headers.pop(name, None)
            else:
                headers[name] = value
        return headers

    def close(self):
        self.control.close()
        self.events.close()


@pytest.fixture
def home():
    path = tempfile.mkdtemp(prefix="wlp-", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def phoned(home, request):
    daemon = Phoned(home, getattr(request, "param", ()))
    try:
        daemon.start()
        yield daemon
    finally:
        status = daemon.stop()
        if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
            print(daemon.log())
    assert status in (None, 0), f"phoned exited with {status}; log tail:\n{daemon.log()[-4000:]}"


@pytest.fixture
def start_phoned(home):
    """Starts a phoned in HOME, any number of times; each is stopped at the end and must have
    exited 0."""
    started = []

    def start(extra=()):
        daemon = Phoned(home, extra)
        started.append(daemon)
        return daemon.start()

    yield start
    statuses = [daemon.stop() for daemon in started]
    assert all(status in (None, 0) for status in statuses), f"phoned exit statuses {statuses}"


@pytest.fixture
def device(phoned):
    d = Device(phoned)
    yield d
    d.close()


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)

"""Slow and malicious clients get an error or a closed connection, while other clients, the
control socket and the link to watchd keep working."""
import json
import os
import socket
import ssl
import subprocess
import time

import httpx
import pytest

from conftest import BIN_DIR, Device, daemon_environment, stop_process

PAYLOAD = json.dumps({"container-identifier": "NSFileProviderRootContainerItemIdentifier"}).encode()
LIMITS = ["--apns-handshake-timeout-ms", "500", "--apns-idle-timeout-ms", "700", "--apns-max-connections", "8"]


def connect(device):
    return socket.create_connection(("127.0.0.1", device.endpoint["port"]), timeout=5)


def read_until_closed(sock, timeout=5):
    """Everything the server sends until it closes; fails if it keeps the connection open."""
    sock.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk
    raise AssertionError(f"the server kept the connection open for {timeout} s (got {data[:80]!r})")


def h2_frames(data):
    """The HTTP/2 frames in `data` as (type, flags, stream, payload) (RFC 9113 section 4.1);
    fails on a cut frame."""
    frames = []
    while data:
        assert len(data) >= 9, f"a cut frame header: {data!r}"
        length = int.from_bytes(data[:3], "big")
        assert len(data) >= 9 + length, f"a cut frame: {data!r}"
        frames.append((data[3], data[4], int.from_bytes(data[5:9], "big") & 0x7FFFFFFF, data[9:9 + length]))
        data = data[9 + length:]
    return frames


SETTINGS, GOAWAY = 0x4, 0x7
NO_ERROR, PROTOCOL_ERROR = 0x0, 0x1


def goaway(frame):
    """(last stream id, error code, debug data) of a GOAWAY frame (RFC 9113 section 6.8)."""
    frame_type, _, stream, payload = frame
    assert frame_type == GOAWAY and stream == 0, frame
    return int.from_bytes(payload[:4], "big") & 0x7FFFFFFF, int.from_bytes(payload[4:8], "big"), payload[8:]


def push_works(device):
    with httpx.Client(http2=True, http1=False, verify=ssl.create_default_context(cafile=device.ca_file), timeout=5) as c:
        response = c.post(f"{device.url}/3/device/{device.token}", headers=device.headers(), content=PAYLOAD)
    return response.status_code == 200


@pytest.fixture
def watchd(phoned):
    with open(os.path.join(phoned.home, "watchd.log"), "ab") as log:
        process = subprocess.Popen([os.path.join(BIN_DIR, "watchd"), "--home", phoned.home], stdout=log, stderr=log,
                                   stdin=subprocess.DEVNULL, env=daemon_environment())
    try:
        control = phoned.control()
        try:
            deadline = time.monotonic() + 30
            while not control.call("status")["link"]["connected"]:
                assert time.monotonic() < deadline, "the link did not come up"
                time.sleep(0.02)
        finally:
            control.close()
        yield process
    finally:
        status = stop_process(process)
    assert status == 0, f"watchd exited with {status} (a sanitizer's report is in watchd.log)"


def link_is_up(device):
    return device.control.call("status")["link"]["connected"] is True


@pytest.mark.parametrize("phoned", [LIMITS], indirect=True)
def test_garbage_gets_an_error_and_a_close(device, watchd):
    for garbage in (b"\x00\xff" * 512, b"PRI * HTTP/9.9\r\n\r\nnonsense" * 10, b"\x16\x03\x01\x00\x05hello" + os.urandom(600),
                    b"GET / HTTP/1.1\r\nhost: x\r\n\r\n"):
        sock = connect(device)
        sock.sendall(garbage)
        answer = read_until_closed(sock)
        sock.close()
        if garbage.startswith(b"\x16"):
            # A TLS record that is no ClientHello: a fatal unexpected_message alert (RFC 8446 section 6).
            assert answer == bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0A]), answer
        elif garbage.startswith(b"PRI"):
            # A wrong HTTP/2 preface is a connection error PROTOCOL_ERROR; the GOAWAY may be
            # omitted (RFC 9113 section 3.4). After the server's SETTINGS, nothing else.
            frames = h2_frames(answer)
            assert frames[0][:3] == (SETTINGS, 0, 0), frames
            assert all(goaway(frame)[1] == PROTOCOL_ERROR for frame in frames[1:]), frames
        else:
            assert answer.startswith(b"HTTP/1.1 505 HTTP Version Not Supported\r\n"), answer[:60]
        assert push_works(device)
    assert link_is_up(device) and watchd.poll() is None
    assert device.control.call("push.stats")["protocolErrors"] >= 2


@pytest.mark.parametrize("phoned", [LIMITS], indirect=True)
def test_half_open_tls_handshake_and_silent_clients_are_timed_out(device, watchd):
    half_open = connect(device)
    half_open.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # the start of a ClientHello, never finished
    silent = connect(device)
    started = time.monotonic()
    assert push_works(device)  # others are served meanwhile
    # The reads wait long; the bounds below say what is too soon and what too late.
    read_until_closed(half_open, timeout=60)
    read_until_closed(silent, timeout=60)
    elapsed = time.monotonic() - started
    assert elapsed >= 0.45, "not closed before the 500 ms handshake timeout"
    # An upper bound, because the rule is a timeout: slack for a loaded host, far below ten times it.
    assert elapsed < 5, f"closed at the 500 ms handshake timeout, not {elapsed:.1f} s later"
    half_open.close()
    silent.close()
    assert device.control.call("push.stats")["timedOutConnections"] >= 2
    assert link_is_up(device) and watchd.poll() is None


@pytest.mark.parametrize("phoned", [LIMITS], indirect=True)
def test_idle_http2_connection_gets_goaway(device):
    sock = connect(device)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
    started = time.monotonic()
    data = read_until_closed(sock, timeout=60)
    elapsed = time.monotonic() - started
    assert elapsed >= 0.65, "not closed before the 700 ms idle timeout"
    # An upper bound, because the rule is a timeout: slack for a loaded host, far below ten times it.
    assert elapsed < 5, f"closed at the 700 ms idle timeout, not {elapsed:.1f} s later"
    sock.close()
    frames = h2_frames(data)
    # The server's SETTINGS, its ACK of ours, then GOAWAY NO_ERROR with Apple's JSON: "The
    # payload of the GOAWAY frame includes JSON data with a reason key" (IdleTimeout: "Idle
    # timeout.", Handling notification responses from APNs).
    assert [(t, f) for t, f, _, _ in frames[:2]] == [(SETTINGS, 0), (SETTINGS, 1)], frames
    assert len(frames) == 3, frames
    assert goaway(frames[2]) == (0, NO_ERROR, b'{"reason":"IdleTimeout"}'), frames[2]


@pytest.mark.parametrize("phoned", [LIMITS], indirect=True)
def test_huge_headers_get_an_error(device, watchd):
    context = ssl.create_default_context(cafile=device.ca_file)
    for size in (20_000, 200_000):
        try:
            with httpx.Client(http2=True, http1=False, verify=context, timeout=30) as c:
                response = c.post(f"{device.url}/3/device/{device.token}", content=PAYLOAD,
                                  headers={**device.headers(), "x-padding": "a" * size})
            assert response.status_code == 431, response
        except (httpx.WriteError, httpx.ReadError, httpx.RemoteProtocolError) as closed:
            # Headers far over the limit may instead close the connection before they are all
            # read; a timeout (httpx.TimeoutException) is neither answer and fails the test.
            assert size == 200_000, f"{size} bytes of headers get a 431, not {closed!r}"
        assert push_works(device)
    assert link_is_up(device) and watchd.poll() is None


def frame_types(data):
    """The types of the HTTP/2 frames in `data`, in order."""
    types, offset = [], 0
    while offset + 9 <= len(data):
        length = int.from_bytes(data[offset:offset + 3], "big")
        types.append(data[offset + 3])
        offset += 9 + length
    return types


def wait_for_connections(device, predicate, what):
    deadline = time.monotonic() + 30
    while not predicate(device.control.call("push.stats")["connections"]):
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def open_request(device):
    """An h2c connection with one request open: HEADERS sent, the body never. Returns once
    the server has acknowledged the client's SETTINGS, which came in the same write as the
    HEADERS: from then on the server holds the request open (the connection is busy)."""
    import h2.config
    import h2.connection
    import h2.events
    sock = connect(device)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    headers = [(":method", "POST"), (":scheme", "http"), (":authority", "localhost"), (":path", f"/3/device/{device.token}")]
    conn.send_headers(1, headers + list(device.headers().items()), end_stream=False)
    sock.sendall(conn.data_to_send())
    sock.settimeout(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        data = sock.recv(65536)
        assert data, "the server closed a connection with a request open"
        if any(isinstance(event, h2.events.SettingsAcknowledged) for event in conn.receive_data(data)):
            return sock
    raise AssertionError("the server did not acknowledge the client's SETTINGS")


@pytest.mark.parametrize("phoned", [LIMITS], indirect=True)
def test_at_the_cap_idle_connections_make_room_and_busy_ones_do_not(device):
    # Eight idle h2c connections hold every slot: a client with work takes the place of the
    # one idle longest, which gets GOAWAY first.
    held = [connect(device) for _ in range(8)]
    for sock in held:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    wait_for_connections(device, lambda n: n == 8, "the server did not take the 8 connections")
    assert push_works(device)
    assert 7 in frame_types(read_until_closed(held[0], timeout=30)), "the evicted connection got no GOAWAY"
    stats = device.control.call("push.stats")
    assert stats["evictedConnections"] >= 1 and stats["refusedConnections"] == 0, stats
    for sock in held:
        sock.close()
    wait_for_connections(device, lambda n: n == 0, "the closed connections stayed")
    # Eight connections with a request open each are busy: a ninth is closed at accept.
    busy = [open_request(device) for _ in range(8)]
    wait_for_connections(device, lambda n: n == 8, "the server did not take the 8 busy connections")
    extra = connect(device)
    read_until_closed(extra, timeout=30)
    extra.close()
    assert device.control.call("push.stats")["refusedConnections"] >= 1
    for sock in busy:
        sock.close()
    wait_for_connections(device, lambda n: n == 0, "the busy connections stayed")
    assert push_works(device)


@pytest.mark.parametrize("phoned", [LIMITS], indirect=True)
def test_many_concurrent_streams_on_one_connection(device):
    import asyncio

    async def burst():
        async with httpx.AsyncClient(http2=True, http1=False, verify=ssl.create_default_context(cafile=device.ca_file),
                                     timeout=10) as c:
            requests = [c.post(f"{device.url}/3/device/{device.token}", headers=device.headers(), content=PAYLOAD)
                        for _ in range(200)]
            return await asyncio.gather(*requests)

    started = time.monotonic()
    responses = asyncio.run(burst())
    elapsed = time.monotonic() - started
    assert [r.status_code for r in responses] == [200] * 200
    print(f"200 pushes over one TLS connection in {elapsed:.3f} s")
    assert len(device.control.call("push.signals")["signals"]) == 200

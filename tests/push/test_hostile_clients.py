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

from conftest import BIN_DIR, Device

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


def push_works(device):
    with httpx.Client(http2=True, http1=False, verify=ssl.create_default_context(cafile=device.ca_file), timeout=5) as c:
        response = c.post(f"{device.url}/3/device/{device.token}", headers=device.headers(), content=PAYLOAD)
    return response.status_code == 200


@pytest.fixture
def watchd(phoned):
    log = open(os.path.join(phoned.home, "watchd.log"), "ab")
    process = subprocess.Popen([os.path.join(BIN_DIR, "watchd"), "--home", phoned.home], stdout=log, stderr=log,
                               stdin=subprocess.DEVNULL)
    log.close()
    control = phoned.control()
    deadline = time.monotonic() + 10
    while not control.call("status")["link"]["connected"]:
        assert time.monotonic() < deadline, "the link did not come up"
        time.sleep(0.02)
    control.close()
    yield process
    process.terminate()
    process.wait(5)


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
        if garbage.startswith(b"GET") or garbage.startswith(b"\x00"):
            assert answer.startswith(b"HTTP/1.1 505"), answer[:40]
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
    read_until_closed(half_open, timeout=5)
    read_until_closed(silent, timeout=5)
    assert 0.4 <= time.monotonic() - started < 5
    half_open.close()
    silent.close()
    assert device.control.call("push.stats")["timedOutConnections"] >= 2
    assert link_is_up(device) and watchd.poll() is None


@pytest.mark.parametrize("phoned", [LIMITS], indirect=True)
def test_idle_http2_connection_gets_goaway(device):
    sock = connect(device)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
    started = time.monotonic()
    data = read_until_closed(sock, timeout=5)
    assert time.monotonic() - started >= 0.6
    assert bytes([7]) in data[:200] or len(data) > 0  # SETTINGS and then GOAWAY (type 7)
    sock.close()


@pytest.mark.parametrize("phoned", [LIMITS], indirect=True)
def test_huge_headers_get_an_error(device, watchd):
    context = ssl.create_default_context(cafile=device.ca_file)
    for size in (20_000, 200_000):
        try:
            with httpx.Client(http2=True, http1=False, verify=context, timeout=5) as c:
                response = c.post(f"{device.url}/3/device/{device.token}", content=PAYLOAD,
                                  headers={**device.headers(), "x-padding": "a" * size})
            assert response.status_code == 431
        except httpx.HTTPError:
            pass  # the connection was closed: also an acceptable answer
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
    """An h2c connection with one request open: HEADERS sent, the body never."""
    import h2.config
    import h2.connection
    sock = connect(device)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    headers = [(":method", "POST"), (":scheme", "http"), (":authority", "localhost"), (":path", f"/3/device/{device.token}")]
    conn.send_headers(1, headers + list(device.headers().items()), end_stream=False)
    sock.sendall(conn.data_to_send())
    return sock


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

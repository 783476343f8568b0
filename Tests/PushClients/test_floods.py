"""Floods of SETTINGS, PING and CONTINUATION frames end with GOAWAY ENHANCE_YOUR_CALM before
the connection closes; a client that reads its acknowledgements may send as many as it likes."""
import json
import socket
import struct
import time

import httpx
import pytest

ENHANCE_YOUR_CALM = 0x0B
PAYLOAD = json.dumps({"container-identifier": "NSFileProviderRootContainerItemIdentifier", "domain": "main"}).encode()


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0)
SETTINGS, PING, HEADERS, CONTINUATION = 4, 6, 1, 9


def connect(device):
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a client that does not read fills up soon
    sock.settimeout(30)
    sock.connect(("127.0.0.1", device.endpoint["port"]))
    sock.sendall(PREFACE)
    return sock


def frames_until_closed(sock, timeout=60):
    """The (type, flags, payload) of every frame the server sends until it closes."""
    data, deadline = b"", time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, "the server kept the connection open"
        try:
            chunk = sock.recv(1 << 20)
        except ConnectionResetError:
            raise AssertionError("the server reset the connection instead of closing it after GOAWAY")
        if not chunk:
            break
        data += chunk
    frames, offset = [], 0
    while offset + 9 <= len(data):
        length = int.from_bytes(data[offset:offset + 3], "big")
        frames.append((data[offset + 3], data[offset + 4], data[offset + 9:offset + 9 + length]))
        offset += 9 + length
    return frames


def goaway_code(frames):
    codes = [int.from_bytes(payload[4:8], "big") for kind, _, payload in frames if kind == 7]
    assert codes, f"no GOAWAY among {len(frames)} frames"
    return codes[-1]


def push_works(device):
    with httpx.Client(http2=True, http1=False, base_url=device.h2c_url, timeout=10) as client:
        return client.post(f"/3/device/{device.token}", headers=device.headers(), content=PAYLOAD).status_code == 200


FLOODS = {
    "settings": frame(SETTINGS, 0, 0) * 1_000_000,
    "ping": frame(PING, 0, 0, b"12345678") * 600_000,
    "continuation": frame(HEADERS, 0, 1, b"\x82") + frame(CONTINUATION, 0, 1, b"\x86") * 100,
}


@pytest.mark.parametrize("flood", sorted(FLOODS))
def test_a_flood_gets_goaway_enhance_your_calm(device, flood):
    sock = connect(device)
    try:
        sock.sendall(FLOODS[flood])
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may close before it has read everything; its GOAWAY is still waiting
    assert goaway_code(frames_until_closed(sock)) == ENHANCE_YOUR_CALM
    sock.close()
    assert device.control.call("push.stats")["protocolErrors"] >= 1
    assert push_works(device)


def test_a_client_that_reads_its_acknowledgements_keeps_going(device):
    sock = connect(device)
    # 5,000 SETTINGS in one write, read afterwards, and then one at a time with a read each.
    sock.sendall(frame(SETTINGS, 0, 0) * 5000)
    buffer, acks = b"", 0
    while acks < 5001:
        chunk = sock.recv(1 << 20)
        assert chunk, "the server closed the connection"
        buffer += chunk
        while len(buffer) >= 9 and len(buffer) >= 9 + int.from_bytes(buffer[:3], "big"):
            length = int.from_bytes(buffer[:3], "big")
            if buffer[3] == SETTINGS and buffer[4] & 1:
                acks += 1
            buffer = buffer[9 + length:]
    for _ in range(2000):
        sock.sendall(frame(PING, 0, 0, b"abcdefgh"))
        while len(buffer) < 17:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the connection"
            buffer += chunk
        assert buffer[3] == PING and buffer[4] & 1, buffer[:9]
        buffer = buffer[17:]
    sock.close()
    assert push_works(device)


def test_a_protocol_error_nghttp2_answers_itself_is_counted(device):
    before = device.control.call("push.stats")["protocolErrors"]
    sock = connect(device)
    sock.sendall(frame(0, 0, 0, b"data on stream 0"))  # DATA on stream 0: PROTOCOL_ERROR (RFC 9113 6.1)
    assert goaway_code(frames_until_closed(sock)) == 0x01
    sock.close()
    assert device.control.call("push.stats")["protocolErrors"] == before + 1

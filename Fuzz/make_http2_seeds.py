"""Writes the seeds of FuzzHTTP2Session: a client's frames after the connection preface, each
after the target's options byte, written by the hyper-h2 library (an HTTP/2 implementation
other than the server's nghttp2).

Usage: .venv/bin/python Fuzz/make_http2_seeds.py Fuzz/corpus/FuzzHTTP2Session
(scripts/ensure-venv.sh makes the venv, with h2 among the push clients' packages)."""
import os, sys
import h2.connection, h2.config, h2.settings

out = sys.argv[1]
TOKEN = "ab" * 32
AUTH = "bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IktFWUlEMTIzNDUifQ.eyJpc3MiOiJURUFNSUQxMjM0IiwiaWF0IjoxNzAwMDAwMDAwfQ.c2lnbmF0dXJl"

def conn():
    c = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    c.initiate_connection()
    data = c.data_to_send()
    assert data.startswith(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    return c, data[24:]

def headers(stream, path=None, extra=()):
    return [(":method", "POST"), (":scheme", "https"), (":path", path or f"/3/device/{TOKEN}"),
            (":authority", "api.push.apple.com"), ("authorization", AUTH),
            ("apns-topic", "com.example.files.pushkit.fileprovider"), ("apns-push-type", "fileprovider"), *extra]

BODY = b'{"container-identifier":"NSFileProviderRootContainerItemIdentifier","domain":"d"}'

def write(name, options, chunks):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([options]) + b"".join(chunks))

# One push.
c, start = conn()
c.send_headers(1, headers(1)); c.send_data(1, BODY, end_stream=True)
write("one-push", 0xC1, [start, c.data_to_send()])

# Several streams interleaved: bodies in pieces, one without a body, trailers on one.
c, start = conn()
chunks = [start]
for s in (1, 3, 5, 7):
    c.send_headers(s, headers(s), end_stream=(s == 5))
chunks.append(c.data_to_send())
c.send_data(3, BODY[:20]); c.send_data(1, BODY, end_stream=True); c.send_data(3, BODY[20:])
c.send_headers(3, [("x-trailer", "1")], end_stream=True)
c.send_data(7, BODY, end_stream=True)
chunks.append(c.data_to_send())
for options in (0xC1, 0xC5, 0xC9, 0xCD, 0x31):
    write(f"interleaved-{options:02x}", options, chunks)

# A stream reset by the client in the middle of its body, then another push.
c, start = conn()
c.send_headers(1, headers(1)); c.send_data(1, BODY[:10]); c.reset_stream(1, 8)
c.send_headers(3, headers(3)); c.send_data(3, BODY, end_stream=True)
write("reset-mid-body", 0xC9, [start, c.data_to_send()])

# Control frames around a push: settings, ping, window updates, priority, then GOAWAY.
c, start = conn()
c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20, h2.settings.SettingCodes.MAX_FRAME_SIZE: 1 << 15})
c.ping(b"12345678")
c.increment_flow_control_window(1 << 16)
c.send_headers(1, headers(1)); c.prioritize(1, weight=32)
c.send_data(1, BODY, end_stream=True)
c.close_connection()
write("control-frames", 0xC5, [start, c.data_to_send()])

# Unauthenticated: one stream allowed until the first request is answered.
c, start = conn()
for s in (1, 3):
    c.send_headers(s, headers(s)); c.send_data(s, BODY, end_stream=True)
write("unauthenticated", 0xC2, [start, c.data_to_send()])

# A header block split into CONTINUATION frames, over the session's header list limit.
c, start = conn()
c.send_headers(1, headers(1, extra=[("x-large", "v" * 20000)]), end_stream=True)
c.send_headers(3, headers(3)); c.send_data(3, BODY, end_stream=True)
write("continuation-oversized", 0xC1, [start, c.data_to_send()])

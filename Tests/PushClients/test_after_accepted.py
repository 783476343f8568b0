"""What APNs does after it answers 200, and the rules it keeps per connection and per
environment, driven by real clients (httpx with h2, aioapns, the h2 library's own connection).
Statuses and reasons are Apple's ("Handling notification responses from APNs"); the rules are
quoted from "Sending notification requests to APNs" and "Establishing a token-based connection
to APNs" where each test uses them."""
import asyncio
import base64
import json
import socket
import ssl
import time
import uuid

import h2.config
import h2.connection
import h2.events
import h2.settings
import httpx
import pytest
from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsProductionClientProtocol

from conftest import BUNDLE_ID, TEAM_ID, TOPIC

ROOT = "NSFileProviderRootContainerItemIdentifier"
VOIP_TOPIC = BUNDLE_ID + ".voip"


def tls_client(url, ca_file, cert=None):
    context = ssl.create_default_context(cafile=ca_file)
    if cert:
        context.load_cert_chain(cert)
    return httpx.Client(http2=True, http1=False, verify=context, base_url=url, timeout=10)


def payload(name):
    return json.dumps({"container-identifier": ROOT, "domain": name}).encode()


def received(device, count, timeout=5):
    return [device.events.wait_event("push.received", timeout=timeout) for _ in range(count)]


def no_event(device, name, within=0.3):
    try:
        device.events.wait_event(name, timeout=within)
    except AssertionError:
        return True
    return False


# Store and forward


def test_an_offline_device_gets_only_the_last_push_of_its_app_when_back(device):
    """"APNs stores only one notification per bundle ID. ... In most cases, the latest
    notification is stored." "If the value is 0, APNs attempts to deliver the notification
    only once and doesn't store it." A date already past has expired."""
    assert device.control.call("push.network.set", online=False) == {"online": False, "stored": []}
    later = int(time.time()) + 3600
    with tls_client(device.url, device.ca_file) as c:
        for name in ["first", "second", "third"]:
            response = c.post(f"/3/device/{device.token}", headers=device.headers(apns_expiration=str(later)), content=payload(name))
            assert response.status_code == 200, "APNs accepts what it stores"
        once = c.post(f"/3/device/{device.token}", headers=device.headers(apns_expiration="0"), content=payload("once"))
        past = c.post(f"/3/device/{device.token}", headers=device.headers(apns_expiration="300"), content=payload("past"))
        assert (once.status_code, past.status_code) == (200, 200)
    dropped = [device.events.wait_event("push.dropped") for _ in range(4)]
    assert [d["reason"] for d in dropped] == ["replaced", "replaced", "expirationZero", "expired"]
    assert no_event(device, "push.received"), "nothing reaches an offline device"
    stored = device.control.call("push.stored")["stored"]
    assert len(stored) == 1 and json.loads(base64.b64decode(stored[0]["payload"]))["domain"] == "third"
    assert stored[0]["expiresAt"] == later * 1000

    device.control.call("push.network.set", online=True)
    (push,) = received(device, 1)
    assert push["payload"]["domain"] == "third"
    assert push["heldMs"] >= 0
    assert no_event(device, "push.received")
    assert device.control.call("push.stored") == {"online": True, "stored": []}


def test_each_client_library_is_answered_200_for_a_stored_push_and_only_the_last_arrives(device, tmp_path, monkeypatch):
    """The five libraries, one after another, to one app while the device is offline: each
    is told 200 (APNs accepted it), each push replaces the one before ("APNs stores only one
    notification per bundle ID"), and only gobiko's, the last, arrives."""
    from libraries import aioapns_send, apns2_send, gobiko_send, kalyke_send, pyapns_client_send
    device.control.call("push.network.set", online=False)
    _, (ok,) = aioapns_send(device, "aioapns")
    assert ok.is_successful, ok.description
    kalyke_send(device, tmp_path, "kalyke")
    pyapns_client_send(device, tmp_path, "pyapns", monkeypatch)
    apns2_send(device, tmp_path, "apns2", monkeypatch)
    gobiko_send(device, tmp_path, "gobiko")
    assert [device.events.wait_event("push.dropped")["reason"] for _ in range(4)] == ["replaced"] * 4
    (stored,) = device.control.call("push.stored")["stored"]
    assert json.loads(base64.b64decode(stored["payload"]))["domain"] == "gobiko"
    assert no_event(device, "push.received"), "nothing reaches an offline device"
    device.control.call("push.network.set", online=True)
    (push,) = received(device, 1)
    assert push["payload"]["domain"] == "gobiko"
    assert no_event(device, "push.received")
    assert device.control.call("push.stored")["stored"] == []


def test_a_stored_push_expires_while_the_device_is_away(device):
    device.control.call("push.network.set", online=False)
    with tls_client(device.url, device.ca_file) as c:
        soon = int(time.time()) + 2
        assert c.post(f"/3/device/{device.token}", headers=device.headers(apns_expiration=str(soon)), content=payload("soon")).status_code == 200
    stored = device.events.wait_event("push.stored")
    dropped = device.events.wait_event("push.dropped", timeout=5)
    assert (dropped["apnsId"], dropped["reason"]) == (stored["apnsId"], "expired")
    device.control.call("push.network.set", online=True)
    assert no_event(device, "push.received")


def test_the_store_outlives_a_restart_of_phoned(start_phoned):
    from conftest import Device
    phoned = start_phoned()
    device = Device(phoned)
    device.control.call("push.network.set", online=False)
    with tls_client(device.url, device.ca_file) as c:
        assert c.post(f"/3/device/{device.token}", headers=device.headers(), content=payload("kept")).status_code == 200
    device.close()
    phoned.stop()
    again = start_phoned()
    control, events = again.control(), again.control()
    events.call("events.subscribe")
    assert len(control.call("push.stored")["stored"]) == 1, "APNs keeps it, not the device"
    control.call("push.network.set", online=True)
    assert events.wait_event("push.received")["payload"]["domain"] == "kept"
    control.close()
    events.close()


# Priorities


def test_low_priority_pushes_go_out_in_bursts_and_priority_1_waits_for_the_device_to_wake(device):
    """"Notifications with apns-priority 5 and apns-priority 1 might get grouped and delivered
    in bursts"; priority 1: "prevent awakening the device". Background pushes: "Always use
    priority 5. Using priority 10 is an error.\""""
    device.control.call("push.config", lowPriorityDelayMs=400)
    with tls_client(device.url, device.ca_file) as c:
        def post(name, priority):
            return c.post(f"/3/device/{device.token}", headers=device.headers(apns_priority=priority), content=payload(name)).status_code
        assert post("five-a", "5") == 200
        assert post("one", "1") == 200
        assert post("five-b", "5") == 200
        started = time.monotonic()
        burst = received(device, 2)
        assert time.monotonic() - started >= 0.2
        assert [p["payload"]["domain"] for p in burst] == ["five-a", "five-b"]
        assert all(p["heldMs"] >= 300 for p in burst)
        assert no_event(device, "push.received", within=0.6), "priority 1 waits for the device to wake"
        assert post("ten", "10") == 200
        woken = received(device, 2)
        assert [p["payload"]["domain"] for p in woken] == ["ten", "one"]
        background = c.post(f"/3/device/{device.token}",
                            headers=device.headers(apns_push_type="background", apns_topic=BUNDLE_ID, apns_priority="10"),
                            content=b'{"aps":{"content-available":1}}')
        assert (background.status_code, background.json()["reason"]) == (400, "BadPriority")


# Tokens, per connection


def test_the_token_rules_are_per_connection(device):
    """"APNs report an error if you use a new token more than once every 20 minutes on the same
    connection": two provider processes with one key, each its own token, get no 429. On one
    connection: a new token too soon is 429; a token of another key is UnrelatedKeyIdInToken
    ("The key ID in the provider token isn't related to the key ID of the token used in the
    first push of this connection. To use this token, open a new connection.")."""
    device.control.call("push.config", tokenUpdateIntervalSeconds=1200)
    other_key = device.control.call("push.keys.create")
    now = int(time.time())
    with tls_client(device.url, device.ca_file) as one, tls_client(device.url, device.ca_file) as two:
        def post(connection, token):
            return connection.post(f"/3/device/{device.token}", headers=device.headers(authorization=f"bearer {token}"),
                                   content=payload("rules"))
        assert post(one, device.jwt(iat=now - 2)).status_code == 200
        assert post(two, device.jwt(iat=now - 1)).status_code == 200, "no false 429 for a second process with the same key"
        too_soon = post(one, device.jwt(iat=now))
        assert (too_soon.status_code, too_soon.json()["reason"]) == (429, "TooManyProviderTokenUpdates")
    with tls_client(device.url, device.ca_file) as alternating:
        assert post(alternating, device.jwt(iat=now)).status_code == 200
        foreign = post(alternating, device.jwt(iat=now, key_id=other_key["keyId"], private_key_pem=other_key["privateKeyPEM"]))
        assert (foreign.status_code, foreign.json()["reason"]) == (403, "UnrelatedKeyIdInToken")
    with tls_client(device.url, device.ca_file) as fresh:
        assert post(fresh, device.jwt(iat=now, key_id=other_key["keyId"], private_key_pem=other_key["privateKeyPEM"])).status_code == 200


def test_one_stream_until_a_valid_token_then_the_advertised_limit(device):
    """"APNs allows only one stream until you post a request with a valid authentication token."""
    host, port = device.endpoint["host"], device.endpoint["port"]
    sock = socket.create_connection((host, port), timeout=5)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    sock.sendall(connection.data_to_send())
    limits = []

    def pump(until):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            for event in connection.receive_data(sock.recv(65536)):
                if isinstance(event, h2.events.RemoteSettingsChanged):
                    changed = event.changed_settings.get(h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS)
                    if changed:
                        limits.append(changed.new_value)
                if until(event):
                    sock.sendall(connection.data_to_send())
                    return event
            sock.sendall(connection.data_to_send())
        raise AssertionError(f"timed out; limits {limits}")

    pump(lambda event: isinstance(event, h2.events.RemoteSettingsChanged))
    assert limits == [1]
    stream = connection.get_next_available_stream_id()
    headers = [(":method", "POST"), (":scheme", "http"), (":authority", f"{host}:{port}"), (":path", f"/3/device/{device.token}")]
    headers += list(device.headers().items())
    connection.send_headers(stream, headers)
    connection.send_data(stream, payload("stream"), end_stream=True)
    sock.sendall(connection.data_to_send())
    response = pump(lambda event: isinstance(event, h2.events.ResponseReceived))
    assert dict(response.headers)[b":status"] == b"200"
    assert limits == [1, 1000], "the new SETTINGS comes with the answer to the first valid request"
    sock.close()


# Environments


def test_development_and_production_are_two_endpoints(device):
    """BadDeviceToken: "Verify that the request contains a valid token and that the token
    matches the environment"; apns-unique-id: "An identifier that is only available in the
    Development environment"; BadEnvironmentKeyIdInToken: "The key ID in the provider token
    doesn't match the environment.\""""
    production = device.endpoint["environments"]["production"]["url"]
    assert device.endpoint["environments"]["development"]["url"] == device.url
    with tls_client(device.url, device.ca_file) as development, tls_client(production, device.ca_file) as live:
        ok = development.post(f"/3/device/{device.token}", headers=device.headers(), content=payload("dev"))
        assert ok.status_code == 200
        assert uuid.UUID(ok.headers["apns-unique-id"])
        wrong = live.post(f"/3/device/{device.token}", headers=device.headers(), content=payload("dev"))
        assert (wrong.status_code, wrong.json()["reason"]) == (400, "BadDeviceToken")
        assert "apns-unique-id" not in wrong.headers
    device.control.call("push.config", environment="production")
    sandbox_key = device.control.call("push.keys.create", environment="development")
    with tls_client(device.url, device.ca_file) as development, tls_client(production, device.ca_file) as live:
        ok = live.post(f"/3/device/{device.token}", headers=device.headers(), content=payload("live"))
        assert ok.status_code == 200
        assert "apns-unique-id" not in ok.headers, "production sends no apns-unique-id"
        wrong = development.post(f"/3/device/{device.token}", headers=device.headers(), content=payload("live"))
        assert (wrong.status_code, wrong.json()["reason"]) == (400, "BadDeviceToken")
    with tls_client(production, device.ca_file) as live:
        restricted = live.post(f"/3/device/{device.token}",
                               headers=device.headers(authorization="bearer " + device.jwt(key_id=sandbox_key["keyId"],
                                                                                           private_key_pem=sandbox_key["privateKeyPEM"])),
                               content=payload("live"))
        assert (restricted.status_code, restricted.json()["reason"]) == (403, "BadEnvironmentKeyIdInToken")


# Reasons from their conditions


def test_a_burst_to_one_token_is_too_many_requests(device):
    """TooManyRequests: "Too many requests were made consecutively to the same device token.\""""
    device.control.call("push.config", deviceTokenRateLimit=5)
    with tls_client(device.url, device.ca_file) as c:
        statuses = [c.post(f"/3/device/{device.token}", headers=device.headers(), content=payload("burst")) for _ in range(7)]
    assert [s.status_code for s in statuses] == [200] * 5 + [429, 429]
    assert statuses[5].json() == {"reason": "TooManyRequests"}


def test_service_unavailable_expired_tokens_and_shutdown(device):
    device.control.call("push.config", serviceAvailable=False)
    with tls_client(device.url, device.ca_file) as c:
        down = c.post(f"/3/device/{device.token}", headers=device.headers(), content=payload("down"))
        assert (down.status_code, down.json()) == (503, {"reason": "ServiceUnavailable"})
        device.control.call("push.config", serviceAvailable=True)
        old = device.token
        assert device.control.call("push.invalidate", reason="ExpiredToken")["reason"] == "ExpiredToken"
        expired = c.post(f"/3/device/{old}", headers=device.headers(), content=payload("old"))
        assert expired.status_code == 410 and expired.json()["reason"] == "ExpiredToken" and "timestamp" in expired.json()


def goaway_after_settings(host, port, action, timeout):
    """Opens an HTTP/2 connection (the h2 library's client), runs `action` once both sides'
    SETTINGS are through, and returns the JSON of the GOAWAY that ends the connection."""
    sock = socket.create_connection((host, port), timeout=5)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    sock.sendall(connection.data_to_send())
    acted = False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            data = sock.recv(65536)
            if not data:
                break
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.SettingsAcknowledged) and not acted:
                    acted = True
                    action()
                if isinstance(event, h2.events.ConnectionTerminated):
                    return json.loads(event.additional_data)
            sock.sendall(connection.data_to_send())
    finally:
        sock.close()
    raise AssertionError(f"no GOAWAY within {timeout} s")


def test_goaway_carries_apples_json(device):
    """"The payload of the GOAWAY frame includes JSON data with a reason key, indicating the
    reason for the connection termination.\""""
    reason = goaway_after_settings(device.endpoint["host"], device.endpoint["port"],
                                   lambda: device.control.call("push.goaway", reason="Shutdown"), timeout=5)
    assert reason == {"reason": "Shutdown"}


# Certificates


def certificate_file(device, tmp_path, **args):
    issued = device.control.call("push.certificates.create", **args)
    path = tmp_path / f"provider-{uuid.uuid4().hex[:6]}.pem"
    path.write_text(issued["certificatePEM"] + issued["privateKeyPEM"])
    return str(path), issued


def test_a_certificate_sends_voip_pushes_and_only_its_topics(device, tmp_path):
    """A provider certificate serves "a single app, the Apple Watch complication, or ...
    background VoIP services associated with a single app"; "The apns-topic header is mandatory
    when the client is connected using a certificate that supports multiple topics"; File
    Provider pushes need "provider authentication tokens (not provider certificates)"."""
    device.control.call("push.register", types=["fileProvider", "voIP"])
    path, issued = certificate_file(device, tmp_path)
    assert issued["topics"] == [BUNDLE_ID, VOIP_TOPIC, BUNDLE_ID + ".complication"]

    class LocalProtocol(APNsProductionClientProtocol):
        APNS_SERVER = "localhost"
        APNS_PORT = device.endpoint["port"]

    async def send():
        client = APNs(client_cert=path, topic=VOIP_TOPIC, use_sandbox=False)
        context = ssl.create_default_context(cafile=device.ca_file)
        context.load_cert_chain(path)
        client.pool.protocol_class = LocalProtocol
        client.pool.ssl_context = context
        request = NotificationRequest(device_token=device.token, message={"aps": {}, "caller": "Ann"},
                                      notification_id=str(uuid.uuid4()), push_type=PushType.VOIP)
        result = await client.send_notification(request)
        client.pool.close()
        return request, result

    request, result = asyncio.run(send())
    assert result.is_successful, result.description
    push = device.events.wait_event("push.received")
    assert (push["type"], push["apnsId"], push["payload"]["caller"]) == ("voIP", request.notification_id, "Ann")

    with tls_client(device.url, device.ca_file, cert=path) as c:
        plain = {"apns-push-type": "voip"}
        missing = c.post(f"/3/device/{device.token}", headers=plain, content=b'{"aps":{}}')
        assert (missing.status_code, missing.json()["reason"]) == (400, "MissingTopic")
        file_provider = c.post(f"/3/device/{device.token}", headers={"apns-push-type": "fileprovider", "apns-topic": TOPIC},
                               content=payload("cert"))
        assert (file_provider.status_code, file_provider.json()["reason"]) == (403, "Forbidden")
    app_only, _ = certificate_file(device, tmp_path, kinds=["app"])
    with tls_client(device.url, device.ca_file, cert=app_only) as c:
        wrong = c.post(f"/3/device/{device.token}", headers={"apns-push-type": "voip", "apns-topic": VOIP_TOPIC}, content=b'{"aps":{}}')
        assert (wrong.status_code, wrong.json()["reason"]) == (400, "TopicDisallowed")
    production_only, _ = certificate_file(device, tmp_path, environment="production")
    with tls_client(device.url, device.ca_file, cert=production_only) as c:
        wrong = c.post(f"/3/device/{device.token}", headers={"apns-push-type": "voip", "apns-topic": VOIP_TOPIC}, content=b'{"aps":{}}')
        assert (wrong.status_code, wrong.json()["reason"]) == (403, "BadCertificateEnvironment")
    expired, _ = certificate_file(device, tmp_path, expired=True)
    with tls_client(device.url, device.ca_file, cert=expired) as c:
        wrong = c.post(f"/3/device/{device.token}", headers={"apns-push-type": "voip", "apns-topic": VOIP_TOPIC}, content=b'{"aps":{}}')
        assert (wrong.status_code, wrong.json()["reason"]) == (403, "BadCertificate")


def test_phoned_stopping_sends_shutdown(start_phoned):
    """Shutdown (503): "The APNs server is shutting down." Its connections get GOAWAY with the
    JSON reason before they close."""
    from conftest import Device
    phoned = start_phoned()
    device = Device(phoned)
    host, port = device.endpoint["host"], device.endpoint["port"]
    device.close()
    assert goaway_after_settings(host, port, phoned.process.terminate, timeout=10) == {"reason": "Shutdown"}
    assert phoned.process.wait(10) == 0


def test_a_store_that_cannot_be_written_is_an_internal_server_error(device):
    """InternalServerError (500): "An internal server error occurred." The push is not
    accepted; the provider may retry ("After 15 minutes, you can retry ... 5XX")."""
    import os
    import shutil
    device.control.call("push.network.set", online=False)
    state = os.path.join(device.phoned.home, "phone", "push", "state.json")
    saved = open(state, "rb").read()
    os.remove(state)
    os.mkdir(state)
    try:
        with tls_client(device.url, device.ca_file) as c:
            failed = c.post(f"/3/device/{device.token}", headers=device.headers(), content=payload("lost"))
            assert (failed.status_code, failed.json()) == (500, {"reason": "InternalServerError"})
    finally:
        shutil.rmtree(state)
        open(state, "wb").write(saved)
    assert device.control.call("push.stored")["stored"] == [], "a push APNs did not accept is not kept"
    with tls_client(device.url, device.ca_file) as c:
        assert c.post(f"/3/device/{device.token}", headers=device.headers(), content=payload("kept")).status_code == 200
    assert len(device.control.call("push.stored")["stored"]) == 1

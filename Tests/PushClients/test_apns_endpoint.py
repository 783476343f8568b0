"""The APNs provider endpoint, driven by httpx (HTTP/2 via the h2 library) over TLS and h2c,
with provider tokens signed by PyJWT and `cryptography`."""
import base64
import json
import os
import re
import ssl
import time

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import BUNDLE_ID, TEAM_ID, TOPIC, Phoned, ControlError

ROOT = "NSFileProviderRootContainerItemIdentifier"
WORKING_SET = "NSFileProviderWorkingSetContainerItemIdentifier"
PAYLOAD = json.dumps({"container-identifier": ROOT, "domain": "main"}).encode()


def client(device, transport):
    if transport == "tls":
        return httpx.Client(http2=True, http1=False, verify=ssl.create_default_context(cafile=device.ca_file), base_url=device.url, timeout=10)
    return httpx.Client(http2=True, http1=False, base_url=device.h2c_url, timeout=10)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.mark.parametrize("transport", ["tls", "h2c"])
def test_accepted_push_signals_the_enumerator(device, transport):
    with client(device, transport) as c:
        response = c.post(f"/3/device/{device.token}", headers=device.headers(apns_id="0b1c7e3e-58a1-4c8b-9d1e-0a4a1f2b3c4d"),
                          content=PAYLOAD)
    assert response.http_version == "HTTP/2"
    assert response.status_code == 200, response.text
    assert response.headers["apns-id"] == "0b1c7e3e-58a1-4c8b-9d1e-0a4a1f2b3c4d"
    received = device.events.wait_event("push.received")
    assert received["type"] == "fileProvider"
    assert received["payload"] == {"container-identifier": ROOT, "domain": "main"}
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert signal["containerIdentifier"] == ROOT
    assert signal["container"] == "root"
    assert signal["domain"] == "main"
    listed = device.control.call("push.signals")["signals"]
    assert [s["apnsId"] for s in listed] == ["0b1c7e3e-58a1-4c8b-9d1e-0a4a1f2b3c4d"]


def test_working_set_and_item_containers_and_generated_apns_id(device):
    with client(device, "tls") as c:
        for container in (WORKING_SET, "item-42"):
            body = json.dumps({"container-identifier": container, "domain": "d"}).encode()
            response = c.post(f"/3/device/{device.token}", headers=device.headers(), content=body)
            assert response.status_code == 200
            assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", response.headers["apns-id"])
    kinds = [(s["containerIdentifier"], s["container"]) for s in device.control.call("push.signals")["signals"]]
    assert kinds == [(WORKING_SET, "workingSet"), ("item-42", "item")]


def test_payload_without_container_is_reported_not_dropped(device):
    with client(device, "h2c") as c:
        response = c.post(f"/3/device/{device.token}", headers=device.headers(), content=b'{"domain": "main"}')
    assert response.status_code == 200
    unusable = device.events.wait_event("fileProvider.unusablePush")
    assert "container-identifier" in unusable["problem"]
    [entry] = device.control.call("push.signals")["signals"]
    assert entry["signaled"] is False and entry["problem"] == unusable["problem"]


def test_der_encoded_signature_is_accepted(device):
    key = serialization.load_pem_private_key(device.private_key_pem.encode(), password=None)
    header = b64url(json.dumps({"alg": "ES256", "kid": device.key_id}).encode())
    claims = b64url(json.dumps({"iss": TEAM_ID, "iat": int(time.time())}).encode())
    der = key.sign(f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    token = f"{header}.{claims}.{b64url(der)}"
    with client(device, "tls") as c:
        response = c.post(f"/3/device/{device.token}", headers=device.headers(authorization=f"bearer {token}"), content=PAYLOAD)
        assert response.status_code == 200, response.text
        tampered = f"{header}.{claims}.{b64url(der[:-1] + bytes([der[-1] ^ 1]))}"
        response = c.post(f"/3/device/{device.token}", headers=device.headers(authorization=f"bearer {tampered}"), content=PAYLOAD)
        assert (response.status_code, response.json()["reason"]) == (403, "InvalidProviderToken")


def other_key_token(device):
    other = ec.generate_private_key(ec.SECP256R1())
    pem = other.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return device.jwt(private_key_pem=pem)


# Each case: a request that has exactly that fault. (method, path, header overrides, body)
CASES = {
    "BadCollapseId": lambda d: ("POST", None, {"apns-collapse-id": "c" * 65}, PAYLOAD),
    "BadDeviceToken": lambda d: ("POST", "/3/device/" + "zz" * 32, {}, PAYLOAD),
    "BadExpirationDate": lambda d: ("POST", None, {"apns-expiration": "tomorrow"}, PAYLOAD),
    "BadMessageId": lambda d: ("POST", None, {"apns-id": "not-a-uuid"}, PAYLOAD),
    "BadPriority": lambda d: ("POST", None, {"apns-priority": "7"}, PAYLOAD),
    "BadTopic": lambda d: ("POST", None, {"apns-topic": BUNDLE_ID}, PAYLOAD),
    "DeviceTokenNotForTopic": lambda d: ("POST", None, {"apns-push-type": "alert", "apns-topic": BUNDLE_ID}, PAYLOAD),
    "DuplicateHeaders": lambda d: ("POST", None, [("apns-topic", TOPIC)], PAYLOAD),
    "InvalidPushType": lambda d: ("POST", None, {"apns-push-type": "fileProvider"}, PAYLOAD),
    "MissingDeviceToken": lambda d: ("POST", "/3/device/", {}, PAYLOAD),
    "MissingTopic": lambda d: ("POST", None, {"apns-topic": None}, PAYLOAD),
    "PayloadEmpty": lambda d: ("POST", None, {}, b""),
    "TopicDisallowed": lambda d: ("POST", None, {"apns-topic": "com.other.app.pushkit.fileprovider"}, PAYLOAD),
    "ExpiredProviderToken": lambda d: ("POST", None, {"authorization": f"bearer {d.jwt(iat=int(time.time()) - 3700)}"}, PAYLOAD),
    "InvalidProviderToken": lambda d: ("POST", None, {"authorization": f"bearer {other_key_token(d)}"}, PAYLOAD),
    "MissingProviderToken": lambda d: ("POST", None, {"authorization": None}, PAYLOAD),
    "BadPath": lambda d: ("POST", f"/3/devices/{d.token}", {}, PAYLOAD),
    "MethodNotAllowed": lambda d: ("GET", None, {}, None),
    "PayloadTooLarge": lambda d: ("POST", None, {}, json.dumps({"container-identifier": ROOT, "pad": "x" * 4100}).encode()),
}
STATUS = {"ExpiredProviderToken": 403, "InvalidProviderToken": 403, "MissingProviderToken": 403, "BadPath": 404,
          "MethodNotAllowed": 405, "Unregistered": 410, "PayloadTooLarge": 413, "TooManyProviderTokenUpdates": 429}


def send_case(c, device, case):
    method, path, overrides, body = case
    if isinstance(overrides, list):
        headers = list(device.headers().items()) + overrides
    else:
        headers = device.headers(**{k.replace("-", "_"): v for k, v in overrides.items()})
    request = c.build_request(method, path or f"/3/device/{device.token}", headers=headers, content=body)
    return c.send(request)


@pytest.mark.parametrize("transport", ["tls", "h2c"])
def test_every_reason_for_a_request_with_that_fault(device, transport):
    results = {}
    with client(device, transport) as c:
        for reason, make in CASES.items():
            response = send_case(c, device, make(device))
            results[reason] = (response.status_code, response.json().get("reason"), response.headers.get("apns-id"))
    for reason, (status, got, apns_id) in results.items():
        assert (status, got) == (STATUS.get(reason, 400), reason), f"{reason}: got {status} {got}"
        # Every answer names the notification: a canonical UUID, generated when the request's
        # apns-id is missing or (BadMessageId) not one.
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", apns_id or ""), f"{reason}: {apns_id!r}"
    assert len({apns_id for _, _, apns_id in results.values()}) == len(results), "each answer has its own apns-id"
    # Each rejection is reported as a push.rejected event with its status and reason.
    rejected = [device.events.wait_event("push.rejected", timeout=30) for _ in CASES]
    assert sorted((e["status"], e["reason"], e["injected"]) for e in rejected) == \
        sorted((status, reason, False) for reason, (status, _, _) in results.items())
    assert sorted(e["apnsId"] for e in rejected) == sorted(apns_id for _, _, apns_id in results.values())
    # A faulty request never reached the device.
    assert device.control.call("push.signals")["signals"] == []
    stats = device.control.call("push.stats")
    assert stats["rejected"] == len(CASES) and stats["accepted"] == 0


def test_voip_payload_limit_is_5120(phoned):
    from conftest import Device
    device = Device(phoned)
    device.control.call("push.register", types=["fileProvider", "voIP"])
    body = json.dumps({"pad": "x" * 4500}).encode()
    with client(device, "h2c") as c:
        ok = c.post(f"/3/device/{device.token}", headers=device.headers(apns_topic=BUNDLE_ID + ".voip", apns_push_type="voip"), content=body)
        assert ok.status_code == 200, ok.text
        big = json.dumps({"pad": "x" * 5200}).encode()
        too = c.post(f"/3/device/{device.token}", headers=device.headers(apns_topic=BUNDLE_ID + ".voip", apns_push_type="voip"), content=big)
        assert (too.status_code, too.json()["reason"]) == (413, "PayloadTooLarge")
    assert device.events.wait_event("push.received")["type"] == "voIP"
    device.close()


def test_410_after_invalidation_with_the_time(device):
    old = device.token
    invalidated = device.control.call("push.invalidate")
    assert invalidated["token"] == old
    event = device.events.wait_event("push.didInvalidateToken")
    assert event == {"type": "fileProvider", "token": old}
    with client(device, "tls") as c:
        response = c.post(f"/3/device/{old}", headers=device.headers(), content=PAYLOAD)
        assert response.status_code == 410
        body = response.json()
        assert body["reason"] == "Unregistered"
        assert body["timestamp"] == invalidated["invalidatedAt"]
        assert abs(body["timestamp"] - time.time() * 1000) < 60_000
        new = device.control.call("push.register", types=["fileProvider"])["token"]
        assert new != old
        assert device.events.wait_event("push.didUpdateCredentials", lambda e: e["token"] == new)["type"] == "fileProvider"
        assert c.post(f"/3/device/{new}", headers=device.headers(), content=PAYLOAD).status_code == 200
        assert c.post(f"/3/device/{old}", headers=device.headers(), content=PAYLOAD).status_code == 410


def test_provider_token_refresh_rule(device):
    """Establishing a token-based connection to APNs: "APNs report an error if you use a new
    token more than once every 20 minutes on the same connection"; an Apple engineer on the
    forums: "At that point, that connection will be unusable until enough time has past"."""
    device.control.call("push.config", tokenUpdateIntervalSeconds=1200)
    now = int(time.time())
    first, second = device.jwt(iat=now - 10), device.jwt(iat=now)
    with client(device, "tls") as c, client(device, "tls") as other:
        def post(connection, token):
            return connection.post(f"/3/device/{device.token}", headers=device.headers(authorization=f"bearer {token}"), content=PAYLOAD)
        assert post(c, first).status_code == 200
        assert post(c, first).status_code == 200
        refused = post(c, second)
        assert (refused.status_code, refused.json()["reason"]) == (429, "TooManyProviderTokenUpdates")
        assert post(c, first).json()["reason"] == "TooManyProviderTokenUpdates", "the connection is unusable now"
        assert post(other, second).status_code == 200, "another connection may use the new token"
        device.control.call("push.config", tokenUpdateIntervalSeconds=0)
        assert post(c, second).status_code == 200


def test_token_and_keys_survive_a_restart(start_phoned):
    from conftest import Device
    first = start_phoned()
    device = Device(first)
    token, key_id, pem = device.token, device.key_id, device.private_key_pem
    ca = open(device.ca_file).read()
    device.close()
    assert first.stop() == 0
    second = start_phoned()
    try:
        control = second.control()
        assert control.call("push.token") == {"token": token, "types": ["fileProvider"]}
        endpoint = control.call("push.endpoint")
        assert open(endpoint["caFile"]).read() == ca
        token_jwt = jwt.encode({"iss": TEAM_ID, "iat": int(time.time())}, pem, algorithm="ES256", headers={"kid": key_id})
        with httpx.Client(http2=True, http1=False, verify=ssl.create_default_context(cafile=endpoint["caFile"])) as c:
            response = c.post(f"{endpoint['url']}/3/device/{token}", content=PAYLOAD,
                              headers={"authorization": f"bearer {token_jwt}", "apns-topic": TOPIC, "apns-push-type": "fileprovider"})
        assert response.status_code == 200, response.text
        control.close()
    finally:
        second.stop()


def test_fault_injection_rejections_delay_and_goaway(device):
    device.control.call("push.inject", status=503, reason="ServiceUnavailable", count=2)
    with client(device, "tls") as c:
        statuses = [c.post(f"/3/device/{device.token}", headers=device.headers(), content=PAYLOAD) for _ in range(3)]
        assert [(r.status_code, r.json().get("reason") if r.content else None) for r in statuses] == \
            [(503, "ServiceUnavailable"), (503, "ServiceUnavailable"), (200, None)]
        injected = [device.events.wait_event("push.rejected") for _ in range(2)]
        assert [(e["status"], e["reason"], e["injected"]) for e in injected] == [(503, "ServiceUnavailable", True)] * 2
        assert [e["apnsId"] for e in injected] == [r.headers["apns-id"] for r in statuses[:2]]
        device.control.call("push.delay", ms=300)
        started = time.monotonic()
        assert c.post(f"/3/device/{device.token}", headers=device.headers(), content=PAYLOAD).status_code == 200
        assert time.monotonic() - started >= 0.3
        device.control.call("push.reset")
        assert device.control.call("push.goaway", errorCode=0, message="maintenance")["connections"] == 1
    # The client sees the GOAWAY: the connection is closed; a new one works.
    with client(device, "tls") as c:
        assert c.post(f"/3/device/{device.token}", headers=device.headers(), content=PAYLOAD).status_code == 200


def test_control_errors(device):
    for op, args in [("push.register", {"types": ["alert"]}), ("push.config", {"bundleId": "bad id"}),
                     ("push.keys.add", {"keyId": "SHORT", "publicKeyPEM": "x"}),
                     ("push.keys.add", {"keyId": "ABCDEFGHIJ", "publicKeyPEM": "not a pem"}),
                     ("push.inject", {"status": 200, "reason": "x"}), ("push.delay", {"ms": -1}),
                     ("push.signals", {"bogus": 1})]:
        with pytest.raises(ControlError) as raised:
            device.control.call(op, **args)
        assert raised.value.error["name"] == "invalidArgument", (op, raised.value.error)
    status = device.control.call("status")
    assert status["push"]["port"] == device.endpoint["port"] and status["push"]["caFile"] == device.ca_file


def test_keys_add_with_a_providers_own_key(device):
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    device.control.call("push.keys.add", keyId="OWNKEY0001", publicKeyPEM=public)
    assert "OWNKEY0001" in device.control.call("push.keys.list")["keyIds"]
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    token = jwt.encode({"iss": TEAM_ID, "iat": int(time.time())}, pem, algorithm="ES256", headers={"kid": "OWNKEY0001"})
    with client(device, "h2c") as c:
        assert c.post(f"/3/device/{device.token}", headers=device.headers(authorization=f"bearer {token}"), content=PAYLOAD).status_code == 200
        # Removed, the key signs nothing any more; removing it again names the unknown id.
        assert device.control.call("push.keys.remove", keyId="OWNKEY0001") == {"keyId": "OWNKEY0001"}
        assert "OWNKEY0001" not in device.control.call("push.keys.list")["keyIds"]
        refused = c.post(f"/3/device/{device.token}", headers=device.headers(authorization=f"bearer {token}"), content=PAYLOAD)
        assert (refused.status_code, refused.json()["reason"]) == (403, "InvalidProviderToken")
    with pytest.raises(ControlError) as raised:
        device.control.call("push.keys.remove", keyId="OWNKEY0001")
    assert raised.value.error["name"] == "invalidArgument" and "OWNKEY0001" in raised.value.error["message"], raised.value.error

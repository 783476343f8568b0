"""`iat` with a fraction, as apns2, pyapns-client and gobiko.apns write it (`time.time()`):
an RFC 7519 NumericDate, which APNs accepts."""
import base64
import json
import time

import httpx

ROOT = "NSFileProviderRootContainerItemIdentifier"
PAYLOAD = json.dumps({"container-identifier": ROOT, "domain": "main"}).encode()


def test_an_iat_with_a_fraction_is_accepted(device):
    token = device.jwt(iat=time.time())
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert isinstance(claims["iat"], float), claims
    with httpx.Client(http2=True, http1=False, base_url=device.h2c_url, timeout=10) as client:
        response = client.post(f"/3/device/{device.token}", headers=device.headers(authorization=f"bearer {token}"),
                                content=PAYLOAD)
    assert response.status_code == 200, response.text
    assert device.events.wait_event("fileProvider.signalEnumerator")["containerIdentifier"] == ROOT


def test_an_iat_an_hour_and_a_half_old_with_a_fraction_is_expired(device):
    token = device.jwt(iat=time.time() - 5400.25)
    with httpx.Client(http2=True, http1=False, base_url=device.h2c_url, timeout=10) as client:
        response = client.post(f"/3/device/{device.token}", headers=device.headers(authorization=f"bearer {token}"),
                               content=PAYLOAD)
    assert response.status_code == 403
    assert response.json() == {"reason": "ExpiredProviderToken"}

"""A header list over the endpoint's limit: 431 with an apns-id, counted in push.stats, and
the connection keeps serving."""
import json
import re

import httpx

PAYLOAD = json.dumps({"container-identifier": "NSFileProviderRootContainerItemIdentifier", "domain": "main"}).encode()
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_an_oversized_header_list_gets_431_with_an_apns_id(device):
    before = device.control.call("push.stats")["oversizedHeaderLists"]
    with httpx.Client(http2=True, http1=False, base_url=device.h2c_url, timeout=10) as client:
        response = client.post(f"/3/device/{device.token}", headers={**device.headers(), "x-padding": "a" * 20_000},
                               content=PAYLOAD)
        assert response.status_code == 431
        assert UUID.match(response.headers["apns-id"]), response.headers
        assert device.control.call("push.stats")["oversizedHeaderLists"] == before + 1
        again = client.post(f"/3/device/{device.token}", headers=device.headers(), content=PAYLOAD)
        assert again.status_code == 200, again.text

"""One fileprovider push sent by each of the five real APNs client libraries the tests use,
unmodified but for the host and port they connect to and the CA they trust. Each raises (or
returns a failed result, for aioapns) when the endpoint does not answer 200."""
import asyncio
import os
import ssl
import subprocess
import uuid

import httpx
import hyper.tls
from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsProductionClientProtocol
from apns2.client import APNsClient
from apns2.credentials import TokenCredentials
from apns2.payload import Payload
from kalyke import ApnsClient, ApnsConfig, ApnsPushType
from pyapns_client import APNSClient, IOSNotification, IOSPayload

from conftest import TEAM_ID, TOPIC

ROOT = "NSFileProviderRootContainerItemIdentifier"


def key_file(device, tmp_path):
    path = tmp_path / f"AuthKey-{uuid.uuid4().hex[:6]}.p8"
    path.write_text(device.private_key_pem)
    return path


def aioapns_send(device, domain, extra_requests=()):
    """The result of the push, and of each of `extra_requests` (device token, payload) after it."""
    class LocalProtocol(APNsProductionClientProtocol):
        APNS_SERVER = "localhost"
        APNS_PORT = device.endpoint["port"]

    async def send():
        client = APNs(key=device.private_key_pem, key_id=device.key_id, team_id=TEAM_ID, topic=TOPIC,
                      ssl_context=ssl.create_default_context(cafile=device.ca_file))
        client.pool.protocol_class = LocalProtocol
        request = NotificationRequest(device_token=device.token, message={"container-identifier": ROOT, "domain": domain},
                                      notification_id=str(uuid.uuid4()), push_type=PushType.FILEPROVIDER)
        results = [await client.send_notification(request)]
        for token, message in extra_requests:
            results.append(await client.send_notification(NotificationRequest(device_token=token, message=message,
                                                                              push_type=PushType.FILEPROVIDER)))
        client.pool.close()
        return request, results

    return asyncio.run(send())


def kalyke_send(device, tmp_path, domain, container=ROOT):
    """The apns-id the endpoint answered."""
    context = ssl.create_default_context(cafile=device.ca_file)
    base_url = device.url

    class LocalClient(ApnsClient):
        @property
        def _base_url(self):
            return base_url

        def _init_client(self, apns_config):
            headers = apns_config.make_headers()
            headers["authorization"] = f"bearer {self._make_authorization()}"
            return httpx.AsyncClient(headers=headers, http2=True, verify=context)

    client = LocalClient(use_sandbox=True, team_id=TEAM_ID, auth_key_id=device.key_id, auth_key_filepath=key_file(device, tmp_path))
    config = ApnsConfig(topic=TOPIC, push_type=ApnsPushType.FILE_PROVIDER)
    return asyncio.run(client.send_message(device_token=device.token, payload={"container-identifier": container, "domain": domain},
                                           apns_config=config))


def pyapns_client_send(device, tmp_path, domain, monkeypatch):
    monkeypatch.setitem(APNSClient.BASE_URLS, APNSClient.MODE_PROD, f"https://localhost:{device.endpoint['port']}")
    client = APNSClient(mode=APNSClient.MODE_PROD, root_cert_path=device.ca_file, auth_key_path=str(key_file(device, tmp_path)),
                        auth_key_id=device.key_id, team_id=TEAM_ID)
    try:
        notification = IOSNotification(payload=IOSPayload(custom={"container-identifier": ROOT, "domain": domain}),
                                        topic=TOPIC, push_type="fileprovider")
        client.push(notification=notification, device_token=device.token)
    finally:
        client.close()


def apns2_send(device, tmp_path, domain, monkeypatch):
    monkeypatch.setattr(APNsClient, "LIVE_SERVER", "localhost")
    monkeypatch.setattr(APNsClient, "DEFAULT_PORT", device.endpoint["port"])
    monkeypatch.setattr(hyper.tls, "cert_loc", device.ca_file)
    monkeypatch.setattr(hyper.tls, "_context", None)  # hyper keeps the first context it made, with the CA of then
    client = APNsClient(credentials=TokenCredentials(auth_key_path=str(key_file(device, tmp_path)), auth_key_id=device.key_id,
                                                     team_id=TEAM_ID))
    client.send_notification(device.token, Payload(custom={"container-identifier": ROOT, "domain": domain}), topic=TOPIC)


def gobiko_send(device, tmp_path, domain):
    """gobiko.apns runs in its own environment (scripts/test-push.sh makes it), as a process."""
    python = os.environ.get("WATCHLINK_GOBIKO_PYTHON")
    assert python and os.path.exists(python), "run the push tests with scripts/test-push.sh, which makes gobiko's environment"
    here = os.path.join(os.path.dirname(__file__), "gobiko")
    result = subprocess.run([python, os.path.join(here, "send.py"), str(device.endpoint["port"]), device.ca_file,
                             str(key_file(device, tmp_path)), device.key_id, TEAM_ID, TOPIC, device.token, domain],
                            env={**os.environ, "PYTHONPATH": here}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

"""Real APNs client libraries, pointed at the endpoint with its CA trusted, deliver pushes."""
import asyncio
import json
import ssl
import uuid

import httpx
from aioapns import APNs, NotificationRequest, PushType
from aioapns.connection import APNsProductionClientProtocol
from kalyke import ApnsClient, ApnsConfig, ApnsPushType

from conftest import TEAM_ID, TOPIC

ROOT = "NSFileProviderRootContainerItemIdentifier"


def test_aioapns_delivers_a_fileprovider_push(device):
    class LocalProtocol(APNsProductionClientProtocol):
        APNS_SERVER = "localhost"
        APNS_PORT = device.endpoint["port"]

    async def send():
        client = APNs(key=device.private_key_pem, key_id=device.key_id, team_id=TEAM_ID, topic=TOPIC,
                      ssl_context=ssl.create_default_context(cafile=device.ca_file))
        client.pool.protocol_class = LocalProtocol
        request = NotificationRequest(device_token=device.token, message={"container-identifier": ROOT, "domain": "aio"},
                                      notification_id=str(uuid.uuid4()), push_type=PushType.FILEPROVIDER)
        ok = await client.send_notification(request)
        bad = await client.send_notification(NotificationRequest(device_token="ab" * 32, message={"container-identifier": ROOT},
                                                                 push_type=PushType.FILEPROVIDER))
        client.pool.close()
        return request, ok, bad

    request, ok, bad = asyncio.run(send())
    assert ok.is_successful, ok.description
    assert ok.notification_id == request.notification_id
    assert (bad.status, bad.description) == ("400", "BadDeviceToken")
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["apnsId"], signal["domain"]) == (request.notification_id, "aio")


def test_kalyke_delivers_a_fileprovider_push(device, tmp_path):
    key_file = tmp_path / "AuthKey.p8"
    key_file.write_text(device.private_key_pem)
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

    client = LocalClient(use_sandbox=True, team_id=TEAM_ID, auth_key_id=device.key_id, auth_key_filepath=key_file)
    config = ApnsConfig(topic=TOPIC, push_type=ApnsPushType.FILE_PROVIDER)
    apns_id = asyncio.run(client.send_message(device_token=device.token,
                                              payload={"container-identifier": "item-7", "domain": "kalyke"},
                                              apns_config=config))
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["apnsId"], signal["containerIdentifier"], signal["container"]) == (apns_id, "item-7", "item")

"""pyapns-client and apns2 (its maintained successor, apns2-up) deliver a fileprovider push,
unmodified but for the host and port they connect to and the CA they trust. Both put `iat`
in their provider token as `time.time()`, with a fraction."""
import hyper.tls
from apns2.client import APNsClient
from apns2.credentials import TokenCredentials
from apns2.payload import Payload
from pyapns_client import APNSClient, IOSNotification, IOSPayload

from conftest import TEAM_ID, TOPIC

ROOT = "NSFileProviderRootContainerItemIdentifier"


def test_pyapns_client_delivers_a_fileprovider_push(device, tmp_path, monkeypatch):
    key_file = tmp_path / "AuthKey.p8"
    key_file.write_text(device.private_key_pem)
    monkeypatch.setitem(APNSClient.BASE_URLS, APNSClient.MODE_PROD, f"https://localhost:{device.endpoint['port']}")
    client = APNSClient(mode=APNSClient.MODE_PROD, root_cert_path=device.ca_file, auth_key_path=str(key_file),
                        auth_key_id=device.key_id, team_id=TEAM_ID)
    try:
        notification = IOSNotification(payload=IOSPayload(custom={"container-identifier": ROOT, "domain": "pyapns"}),
                                        topic=TOPIC, push_type="fileprovider")
        client.push(notification=notification, device_token=device.token)
    finally:
        client.close()
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["containerIdentifier"], signal["domain"]) == (ROOT, "pyapns")


def test_apns2_delivers_a_fileprovider_push(device, tmp_path, monkeypatch):
    key_file = tmp_path / "AuthKey.p8"
    key_file.write_text(device.private_key_pem)
    monkeypatch.setattr(APNsClient, "LIVE_SERVER", "localhost")
    monkeypatch.setattr(APNsClient, "DEFAULT_PORT", device.endpoint["port"])
    monkeypatch.setattr(hyper.tls, "cert_loc", device.ca_file)
    client = APNsClient(credentials=TokenCredentials(auth_key_path=str(key_file), auth_key_id=device.key_id, team_id=TEAM_ID))
    client.send_notification(device.token, Payload(custom={"container-identifier": ROOT, "domain": "apns2"}), topic=TOPIC)
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["containerIdentifier"], signal["domain"]) == (ROOT, "apns2")


def test_gobiko_apns_delivers_a_fileprovider_push(device, tmp_path):
    """gobiko.apns runs in its own environment (scripts/test-push.sh makes it), as a process."""
    import os
    import subprocess
    python = os.environ.get("WATCHLINK_GOBIKO_PYTHON")
    assert python and os.path.exists(python), "run the push tests with scripts/test-push.sh, which makes gobiko's environment"
    key_file = tmp_path / "AuthKey.p8"
    key_file.write_text(device.private_key_pem)
    here = os.path.join(os.path.dirname(__file__), "gobiko")
    result = subprocess.run([python, os.path.join(here, "send.py"), str(device.endpoint["port"]), device.ca_file, str(key_file),
                             device.key_id, TEAM_ID, TOPIC, device.token, "gobiko"],
                            env={**os.environ, "PYTHONPATH": here}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["containerIdentifier"], signal["domain"]) == (ROOT, "gobiko")

"""pyapns-client, apns2 (its maintained successor, apns2-up) and gobiko.apns deliver a
fileprovider push. pyapns-client and apns2 put `iat` in their provider token as `time.time()`,
with a fraction."""
from libraries import ROOT, apns2_send, gobiko_send, pyapns_client_send


def test_pyapns_client_delivers_a_fileprovider_push(device, tmp_path, monkeypatch):
    pyapns_client_send(device, tmp_path, "pyapns", monkeypatch)
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["containerIdentifier"], signal["domain"]) == (ROOT, "pyapns")


def test_apns2_delivers_a_fileprovider_push(device, tmp_path, monkeypatch):
    apns2_send(device, tmp_path, "apns2", monkeypatch)
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["containerIdentifier"], signal["domain"]) == (ROOT, "apns2")


def test_gobiko_apns_delivers_a_fileprovider_push(device, tmp_path):
    gobiko_send(device, tmp_path, "gobiko")
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["containerIdentifier"], signal["domain"]) == (ROOT, "gobiko")

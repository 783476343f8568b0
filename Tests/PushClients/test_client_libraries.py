"""Real APNs client libraries, pointed at the endpoint with its CA trusted, deliver pushes."""
from libraries import ROOT, aioapns_send, kalyke_send


def test_aioapns_delivers_a_fileprovider_push(device):
    request, (ok, bad) = aioapns_send(device, "aio", extra_requests=[("ab" * 32, {"container-identifier": ROOT})])
    assert ok.is_successful, ok.description
    assert ok.notification_id == request.notification_id
    assert (bad.status, bad.description) == ("400", "BadDeviceToken")
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["apnsId"], signal["domain"]) == (request.notification_id, "aio")


def test_kalyke_delivers_a_fileprovider_push(device, tmp_path):
    apns_id = kalyke_send(device, tmp_path, "kalyke", container="item-7")
    signal = device.events.wait_event("fileProvider.signalEnumerator")
    assert (signal["apnsId"], signal["containerIdentifier"], signal["container"]) == (apns_id, "item-7", "item")

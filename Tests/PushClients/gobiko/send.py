"""Sends one fileprovider push with gobiko.apns, pointed at a local endpoint: argv = port, CA
file, key file, key id, team id, topic, device token, domain."""
import sys

import gobiko.apns.client as client_module
import hyper.tls

port, ca_file, key_file, key_id, team_id, topic, token, domain = sys.argv[1:9]
client_module.PRODUCTION_HOST = f"localhost:{port}"
hyper.tls.cert_loc = ca_file
client = client_module.APNsClient(team_id=team_id, auth_key_id=key_id, auth_key_filepath=key_file)
client.send_message(token, None, topic=topic, push_type="fileprovider",
                    extra={"container-identifier": "NSFileProviderRootContainerItemIdentifier", "domain": domain})
print("sent")

"""Asks python-gitlab for the server's version, as GitLab users do first. Prints one JSON line."""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
gl = gitlab.Gitlab(url, private_token=token)
version, revision = gl.version()

anonymous = gitlab.Gitlab(url)
print(json.dumps({"version": version, "revision": revision, "anonymous": anonymous.version()}))

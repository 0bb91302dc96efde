"""Drives push mirrors with python-gitlab, as a project maintainer would.

Arguments: server URL, a Maintainer's token, the project ID and the mirror URL (with credentials).
python-gitlab 3.12 lists, creates and updates mirrors through `project.remote_mirrors`; it has no
method for reading one, forcing an update, the public key or deleting, so those go through its HTTP
helpers. Prints one JSON line of findings.
"""
import json
import sys
import time

import gitlab

url, token, project_id, mirror_url = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id, lazy=True)
base = f"/projects/{project_id}/remote_mirrors"

mirror = project.remote_mirrors.create({"url": mirror_url, "enabled": True, "only_protected_branches": True})
created = [mirror.enabled, mirror.only_protected_branches, mirror.url.split("@")[0]]

# Switch protected-only off with the object's own save(), then force an update and wait for it.
mirror.only_protected_branches = False
mirror.save()
gl.http_post(f"{base}/{mirror.id}/sync")
state = None
for _ in range(300):
    state = gl.http_get(f"{base}/{mirror.id}")
    if state["update_status"] in ("finished", "failed"):
        break
    time.sleep(0.2)

ssh = project.remote_mirrors.create({"url": "ssh://git@mirror.invalid/x.git", "auth_method": "ssh_public_key"})
key = gl.http_get(f"{base}/{ssh.id}/public_key")["public_key"]
try:
    gl.http_get(f"{base}/{mirror.id}/public_key")
    password_key = None
except gitlab.exceptions.GitlabHttpError as err:
    password_key = err.response_code

listed = [[m.id == mirror.id, m.auth_method] for m in project.remote_mirrors.list(get_all=True)]
gl.http_delete(f"{base}/{ssh.id}")
after_delete = len(project.remote_mirrors.list(get_all=True))

print(
    json.dumps(
        {
            "created": created,
            "saved": state["only_protected_branches"],
            "status": state["update_status"],
            "error": state["last_error"],
            "key": key.split(" ")[0],
            "password_key": password_key,
            "listed": listed,
            "after_delete": after_delete,
        }
    )
)

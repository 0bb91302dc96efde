"""Drives repository storage moves with python-gitlab, as an administrator would.

Debian's python-gitlab 3.12 has no storage move managers yet (`gl.project_repository_storage_moves`
came later), so this goes through the client's own HTTP layer, as a user of that version does.

Arguments: server URL, an administrator's token, a project ID, a group ID. Prints one JSON line.
"""
import json
import sys
import time

import gitlab

url, token = sys.argv[1], sys.argv[2]
project_id, group_id = int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)


def wait(path):
    for _ in range(300):
        move = gl.http_get(path)
        if move["state"] in ("finished", "failed", "cleanup_failed"):
            return move
        time.sleep(0.2)
    return move


move = gl.http_post(f"/projects/{project_id}/repository_storage_moves", post_data={"destination_storage_name": "second"})
done = wait(f"/projects/{project_id}/repository_storage_moves/{move['id']}")
listed = [m["id"] for m in gl.http_list(f"/projects/{project_id}/repository_storage_moves", get_all=True)]
everywhere = [m["id"] for m in gl.http_list("/project_repository_storage_moves", per_page=1, get_all=True)]
on_second = [p.id for p in gl.projects.list(repository_storage="second", get_all=True)]
project = gl.projects.get(project_id)

try:
    gl.http_post(f"/projects/{project_id}/repository_storage_moves", post_data={"destination_storage_name": "nowhere"})
    unknown = None
except gitlab.exceptions.GitlabHttpError as err:
    unknown = [err.response_code, err.error_message]

bulk = gl.http_post("/project_repository_storage_moves", post_data={"source_storage_name": "second", "destination_storage_name": "default"})
group_move = gl.http_post(f"/groups/{group_id}/repository_storage_moves", post_data={"destination_storage_name": "second"})
group_done = wait(f"/group_repository_storage_moves/{group_move['id']}")

print(
    json.dumps(
        {
            "scheduled": [move["state"], move["source_storage_name"], move["destination_storage_name"], move["project"]["id"]],
            "done": done["state"],
            "listed": move["id"] in listed and move["id"] in everywhere,
            "on_second": project_id in on_second,
            "repository_storage": project.repository_storage,
            "unknown": unknown,
            "bulk": bulk,
            "group": [group_done["state"], group_done["group"]["id"]],
        }
    )
)

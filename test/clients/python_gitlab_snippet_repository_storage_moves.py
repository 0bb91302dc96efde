"""Drives snippet repository storage moves with python-gitlab, as an administrator would.

Debian's python-gitlab 3.12 has no snippet storage move manager (`gl.snippet_repository_storage_moves`
came later), so this goes through the client's own HTTP layer, as a user of that version does.

Arguments: server URL, an administrator's token. Prints one JSON line.
"""
import json
import sys
import time

import gitlab

url, token = sys.argv[1], sys.argv[2]
gl = gitlab.Gitlab(url, private_token=token)


def wait(path):
    for _ in range(300):
        move = gl.http_get(path)
        if move["state"] in ("finished", "failed", "cleanup_failed"):
            return move
        time.sleep(0.2)
    return move


snippet = gl.snippets.create({"title": "moved by python", "file_name": "a.py", "content": "print(1)\n"})
move = gl.http_post(f"/snippets/{snippet.id}/repository_storage_moves", post_data={"destination_storage_name": "second"})
done = wait(f"/snippets/{snippet.id}/repository_storage_moves/{move['id']}")
listed = [m["id"] for m in gl.http_list(f"/snippets/{snippet.id}/repository_storage_moves", get_all=True)]
everywhere = [m["id"] for m in gl.http_list("/snippet_repository_storage_moves", per_page=1, get_all=True)]
raw = gl.snippets.get(snippet.id).content().decode()

try:
    gl.http_post(f"/snippets/{snippet.id}/repository_storage_moves", post_data={"destination_storage_name": "nowhere"})
    unknown = None
except gitlab.exceptions.GitlabHttpError as err:
    unknown = [err.response_code, err.error_message]

bulk = gl.http_post("/snippet_repository_storage_moves", post_data={"source_storage_name": "second", "destination_storage_name": "default"})

print(
    json.dumps(
        {
            "scheduled": [move["state"], move["source_storage_name"], move["destination_storage_name"], move["snippet"]["id"]],
            "done": done["state"],
            "listed": move["id"] in listed and move["id"] in everywhere,
            "raw": raw,
            "unknown": unknown,
            "bulk": bulk,
        }
    )
)

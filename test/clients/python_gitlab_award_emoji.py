"""Drives emoji reactions on a merge request and on its note with python-gitlab, as a GitLab user would.

Arguments: server URL, a Developer's token, the project ID and the iid of an open merge request.
Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
project_id, iid = int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
mr = gl.projects.get(project_id, lazy=True).mergerequests.get(iid)

# On the merge request: award, read, list (every page), count as a vote, refuse a repeat, delete.
thumbs = mr.awardemojis.create({"name": "thumbsup"})
fetched = mr.awardemojis.get(thumbs.id)
for name in ["tada", "rocket", "eyes"]:
    mr.awardemojis.create({"name": name})
listed = [a.name for a in mr.awardemojis.list(per_page=2, get_all=True)]
upvotes = gl.projects.get(project_id, lazy=True).mergerequests.get(iid).upvotes
try:
    mr.awardemojis.create({"name": "thumbsup"})
    repeat = None
except gitlab.exceptions.GitlabCreateError as err:
    repeat = [err.response_code, err.error_message]
fetched.delete()
after_delete = [a.name for a in mr.awardemojis.list(get_all=True)]

# On a note: award, list, read, delete.
note = mr.notes.get(mr.notes.create({"body": "Nice"}).id)
heart = note.awardemojis.create({"name": "heart"})
note_listed = [[a.name, a.awardable_type, a.awardable_id == note.id] for a in note.awardemojis.list(get_all=True)]
note_fetched = note.awardemojis.get(heart.id).name
heart.delete()

print(
    json.dumps(
        {
            "award": [thumbs.name, thumbs.awardable_type, thumbs.user["id"] == gl.http_get("/user")["id"]],
            "fetched": fetched.name,
            "listed": listed,
            "upvotes": upvotes,
            "repeat": repeat,
            "after_delete": after_delete,
            "note": note_listed,
            "note_fetched": note_fetched,
            "note_after_delete": len(note.awardemojis.list(get_all=True)),
        }
    )
)

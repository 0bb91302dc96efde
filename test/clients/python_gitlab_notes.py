"""Drives merge request notes and discussions with python-gitlab, as a GitLab user would.

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

# Notes: create, list, get, edit through save(), delete.
note = mr.notes.create({"body": "First look"})
fetched = mr.notes.get(note.id)
fetched.body = "First look, edited"
fetched.save()
listed = [n.body for n in mr.notes.list(get_all=True)]
doomed = mr.notes.create({"body": "Doomed"})
doomed.delete()
after_delete = [n.id for n in mr.notes.list(get_all=True)]

# Discussions: a thread, a reply, resolving it through save().
discussion = mr.discussions.create({"body": "Should this parse lazily?"})
reply = discussion.notes.create({"body": "Yes"})
discussion = mr.discussions.get(discussion.id)
discussion.resolved = True
discussion.save()
resolved = [n["resolved"] for n in mr.discussions.get(discussion.id).attributes["notes"]]
threads = [len(d.attributes["notes"]) for d in mr.discussions.list(get_all=True)]

# A thread on a point of the image the merge request adds, at its diff refs.
refs = mr.diff_refs
on_image = mr.discussions.create(
    {
        "body": "Too dark here",
        "position": {
            "position_type": "image",
            "base_sha": refs["base_sha"],
            "start_sha": refs["start_sha"],
            "head_sha": refs["head_sha"],
            "new_path": "logo.png",
            "old_path": "logo.png",
            "width": 64,
            "height": 48,
            "x": 10.5,
            "y": 20,
        },
    }
)
image_note = mr.discussions.get(on_image.id).attributes["notes"][0]
image_keys = ("position_type", "new_path", "width", "height", "x", "y")
image_position = {key: image_note["position"][key] for key in image_keys}

print(
    json.dumps(
        {
            "note": [fetched.body, note.noteable_iid, note.system],
            "listed": listed,
            "after_delete": after_delete == [note.id],
            "discussion": [len(discussion.id), reply.body, reply.type],
            "resolved": resolved,
            "threads": threads,
            "image": [image_note["type"], image_position, image_note["position"]["head_sha"] == refs["head_sha"]],
            "user_notes_count": gl.projects.get(project_id, lazy=True).mergerequests.get(iid).user_notes_count,
        }
    )
)

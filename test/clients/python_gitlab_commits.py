"""Drives the commits API with python-gitlab, as a GitLab user would. Prints one JSON line of findings."""
import base64
import json
import sys

import gitlab

url, token, project_id = sys.argv[1], sys.argv[2], sys.argv[3]
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)

created = project.commits.create({
    "branch": "main",
    "commit_message": "From python-gitlab",
    "actions": [
        {"action": "create", "file_path": "py/hello.py", "content": "print('hello')\n"},
        {
            "action": "create",
            "file_path": "py/data.bin",
            "content": base64.b64encode(b"\x00\x01\xff").decode(),
            "encoding": "base64",
        },
    ],
})
second = project.commits.create({
    "branch": "topic",
    "start_branch": "main",
    "commit_message": "On a topic branch",
    "actions": [{"action": "update", "file_path": "py/hello.py", "content": "print('topic')\n"}],
})

# Offset pagination without totals, followed through the Link header.
listed = [c.id for c in project.commits.list(ref_name="topic", iterator=True, per_page=1)]
page = project.commits.list(ref_name="main", per_page=1, page=1, iterator=True)
shown = project.commits.get(created.id)

try:
    project.commits.create({
        "branch": "main",
        "commit_message": "again",
        "actions": [{"action": "create", "file_path": "py/hello.py", "content": "x"}],
    })
    duplicate = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    duplicate = [e.response_code, e.error_message]

try:
    project.commits.get("0" * 40)
    missing = "no error"
except gitlab.exceptions.GitlabGetError as e:
    missing = [e.response_code, e.error_message]

print(json.dumps({
    "created_title": created.title,
    "created_parent_count": len(created.parent_ids),
    "created_stats": created.stats,
    "second_parent": second.parent_ids[0],
    "listed": listed,
    "total": page.total,
    "next_page": page.next_page,
    "shown_id": shown.id,
    "shown_short_id": shown.short_id,
    "shown_project_id": shown.project_id,
    "duplicate": duplicate,
    "missing": missing,
    "created_id": created.id,
    "second_id": second.id,
}))

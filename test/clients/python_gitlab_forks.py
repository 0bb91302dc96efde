"""Drives forks and uploads with python-gitlab, as a GitLab user would. Prints one JSON line of findings."""
import json
import sys

import gitlab

url, token, admin_token, project_id, group_path = (
    sys.argv[1],
    sys.argv[2],
    sys.argv[3],
    int(sys.argv[4]),
    sys.argv[5],
)
gl = gitlab.Gitlab(url, private_token=token)
admin = gitlab.Gitlab(url, private_token=admin_token)
project = gl.projects.get(project_id)

mine = project.forks.create({})
named = project.forks.create({"namespace": group_path, "path": "py-fork", "name": "py fork"})
listed = sorted(p.id for p in project.forks.list(get_all=True, order_by="id", sort="asc"))
paged = [p.id for p in project.forks.list(iterator=True, per_page=1, order_by="id")]
fork = gl.projects.get(mine.id)

try:
    project.forks.create({})
    again = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    again = [e.response_code, e.error_message]

fork.delete_fork_relation()
unlinked = gl.projects.get(mine.id)
admin.projects.get(mine.id, lazy=True).create_fork_relation(project_id)
relinked = gl.projects.get(mine.id)

uploaded = project.upload("diagram.png", filedata=b"\x89PNG\r\n\x1a\n")
document = project.upload("notes.txt", filedata=b"hello")

print(json.dumps({
    "mine": [mine.forked_from_project["id"], mine.import_status, mine.namespace["kind"]],
    "named": [named.path_with_namespace, named.forked_from_project["id"]],
    "listed": listed == sorted([mine.id, named.id]),
    "paged": sorted(paged) == listed,
    "fork": [fork.forked_from_project["id"], fork.mr_default_target_self],
    "again": again,
    "unlinked": hasattr(unlinked, "forked_from_project"),
    "relinked": relinked.forked_from_project["id"],
    "forks_count": gl.projects.get(project_id).forks_count,
    "uploaded": [uploaded["alt"], uploaded["markdown"].startswith("!["), uploaded["url"].endswith("/diagram.png")],
    "document": [document["alt"], document["markdown"].startswith("[notes]")],
}))

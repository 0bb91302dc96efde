"""Drives forge-api's groups with python-gitlab, as a GitLab user would. Prints one JSON line of findings."""
import json
import sys

import gitlab

url, token, tag = sys.argv[1], sys.argv[2], sys.argv[3]
gl = gitlab.Gitlab(url, private_token=token)

top = gl.groups.create({"name": f"Py {tag}", "path": f"py-{tag}", "visibility": "internal"})
sub = gl.groups.create({"name": "Sub", "path": "sub", "parent_id": top.id})
for i in range(3):
    gl.groups.create({"name": f"Extra {i}", "path": f"extra-{i}", "parent_id": top.id})
project = gl.projects.create({"name": "App", "namespace_id": sub.id})

by_id = gl.groups.get(top.id)
by_path = gl.groups.get(f"py-{tag}/sub")
# Offset pagination, followed through the Link header.
searched = [g.full_path for g in gl.groups.list(search=tag, per_page=2, iterator=True)]
subgroups = [g.path for g in top.subgroups.list(get_all=True, per_page=2)]
skipped = [g.path for g in top.subgroups.list(get_all=True, skip_groups=[sub.id])]
projects = [p.path_with_namespace for p in top.projects.list(include_subgroups=True, get_all=True)]
page = gl.groups.list(search=tag, per_page=2, page=2, iterator=True)

top.description = "Saved by python-gitlab"
top.path = f"py-renamed-{tag}"
top.save()
moved = gl.groups.get(sub.id)

try:
    gl.groups.create({"name": "Bad", "path": "-bad"})
    invalid = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    invalid = [e.response_code, e.error_message]

gl.groups.get(top.id).delete()
try:
    gl.groups.get(sub.id)
    deleted = "still there"
except gitlab.exceptions.GitlabGetError as e:
    deleted = e.response_code

print(json.dumps({
    "full_path": sub.full_path,
    "by_id": by_id.full_path,
    "by_path": by_path.id == sub.id,
    "projects_in_detail": [p["path"] for p in by_path.attributes["projects"]],
    "searched": searched,
    "subgroups": subgroups,
    "skipped": skipped,
    "projects": projects,
    "current_page": page.current_page,
    "total": page.total,
    "total_pages": page.total_pages,
    "saved": [top.description, top.full_path],
    "moved": moved.full_path,
    "project": project.path_with_namespace,
    "invalid": invalid,
    "deleted": deleted,
}))

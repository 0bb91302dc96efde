"""Drives tags and protected tags with python-gitlab, as a GitLab user would. Prints one JSON line of findings."""
import json
import sys

import gitlab

url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id, lazy=True)

# Protected tags first, so that the tags below show which names they cover.
rule = project.protectedtags.create({"name": "v*", "create_access_level": 30})
project.protectedtags.create({"name": "release/*"})
rules = [r.name for r in project.protectedtags.list(iterator=True, per_page=1)]
got_rule = project.protectedtags.get("v*")

annotated = project.tags.create({"tag_name": "v1.0.0", "ref": "main", "message": "Release 1.0.0"})
lightweight = project.tags.create({"tag_name": "release/1.0", "ref": "main"})
project.tags.create({"tag_name": "nightly", "ref": "v1.0.0"})
listed = [t.name for t in project.tags.list(iterator=True, per_page=2, order_by="name", sort="asc")]
searched = [t.name for t in project.tags.list(search="^v", get_all=True)]
fetched = project.tags.get("release/1.0")

try:
    project.tags.create({"tag_name": "v1.0.0", "ref": "main"})
    duplicate = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    duplicate = [e.response_code, e.error_message]

fetched.delete()
try:
    project.tags.get("release/1.0")
    after_delete = "no error"
except gitlab.exceptions.GitlabGetError as e:
    after_delete = e.response_code

got_rule.delete()
remaining = [r.name for r in project.protectedtags.list(get_all=True)]

print(json.dumps({
    "rule": [rule.name, [level["access_level"] for level in rule.create_access_levels]],
    "rules": rules,
    "got_rule": got_rule.name,
    "annotated": [annotated.name, annotated.message, annotated.protected, annotated.commit["title"]],
    "lightweight": [lightweight.name, lightweight.message, lightweight.protected],
    "listed": listed,
    "searched": searched,
    "fetched": [fetched.name, fetched.target == fetched.commit["id"]],
    "duplicate": duplicate,
    "after_delete": after_delete,
    "remaining": remaining,
}))

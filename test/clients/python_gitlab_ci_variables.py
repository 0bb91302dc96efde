"""Drives project, group and instance CI/CD variables with python-gitlab, as a GitLab user would.

`project.variables`, `group.variables` and `gl.variables` (instance): create, list, get, save, delete, and
`filter[environment_scope]` (python-gitlab sends a dict keyword as `filter[environment_scope]=...`).

Arguments: server URL, an administrator's token, a group ID and a project ID. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
group_id, project_id = int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
found = {}

# Project variables: two scopes of one key, picked with the filter.
project = gl.projects.get(project_id)
var = project.variables.create({"key": "PY_TOKEN", "value": "everywhere"})
found["created"] = [var.key, var.value, var.environment_scope, var.masked]
project.variables.create(
    {"key": "PY_TOKEN", "value": "prod", "environment_scope": "production", "protected": True}
)
found["listed"] = sorted(f"{v.key}@{v.environment_scope}" for v in project.variables.list(all=True))
try:
    project.variables.get("PY_TOKEN")
    found["ambiguous"] = None
except gitlab.exceptions.GitlabGetError as err:
    found["ambiguous"] = [err.response_code, err.error_message]
prod = project.variables.get("PY_TOKEN", filter={"environment_scope": "production"})
found["prod"] = [prod.value, prod.protected]
project.variables.update("PY_TOKEN", {"value": "prod2"}, filter={"environment_scope": "production"})
found["updated"] = project.variables.get("PY_TOKEN", filter={"environment_scope": "production"}).value
project.variables.delete("PY_TOKEN", filter={"environment_scope": "*"})
only = project.variables.get("PY_TOKEN")
only.value = "prod3"
only.save()
found["saved"] = project.variables.get("PY_TOKEN").value
only.delete()
found["project_after"] = len(project.variables.list(all=True))

# Group variables.
group = gl.groups.get(group_id)
gvar = group.variables.create({"key": "PY_GROUP", "value": "c2VjcmV0LXZhbHVl", "masked": True})
found["group_created"] = [gvar.key, gvar.masked]
gvar = group.variables.get("PY_GROUP")
gvar.value = "bmV3LXNlY3JldA=="
gvar.save()
found["group_saved"] = group.variables.get("PY_GROUP").value
try:
    group.variables.create({"key": "BAD-KEY", "value": "x"})
    found["group_bad_key"] = None
except gitlab.exceptions.GitlabCreateError as err:
    found["group_bad_key"] = [err.response_code, err.error_message]
group.variables.delete("PY_GROUP")
found["group_after"] = len(group.variables.list(all=True))

# Instance variables.
ivar = gl.variables.create({"key": "PY_INSTANCE", "value": "one"})
found["instance_created"] = [ivar.key, ivar.value]
ivar = gl.variables.get("PY_INSTANCE")
ivar.value = "two"
ivar.save()
found["instance_saved"] = gl.variables.get("PY_INSTANCE").value
found["instance_listed"] = [v.key for v in gl.variables.list(all=True)]
gl.variables.delete("PY_INSTANCE")
found["instance_after"] = [v.key for v in gl.variables.list(all=True)]

print(json.dumps(found))

"""Drives environments and deployments with python-gitlab, as a GitLab user would.

`project.environments` (create, list with filters, get, save, stop, delete) and `project.deployments`
(create, list with filters, get, save).

Arguments: server URL, a Maintainer's token and a project ID. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id, lazy=True)
found = {}

env = project.environments.create({"name": "py-staging", "external_url": "https://py.example.com"})
found["created"] = [env.name, env.state, env.tier, env.external_url]
env.external_url = "https://py2.example.com"
env.save()
found["saved"] = project.environments.get(env.id).external_url
found["listed"] = [e.name for e in project.environments.list(search="py-", states="available")]
found["by_name"] = [e.id == env.id for e in project.environments.list(name="py-staging")]

dep = project.deployments.create(
    {"environment": "py-staging", "sha": "a" * 40, "ref": "main", "tag": False, "status": "running"}
)
found["deployment"] = [dep.status, dep.environment["name"], dep.deployable]
dep.status = "success"
dep.save()
found["deployment_saved"] = project.deployments.get(dep.id).status
found["deployments"] = [
    d.iid for d in project.deployments.list(environment="py-staging", status="success", order_by="iid", sort="desc")
]
found["last_deployment"] = project.environments.get(env.id).last_deployment["id"] == dep.id

env.stop()
found["stopped"] = project.environments.get(env.id).state
env.delete()
try:
    project.environments.get(env.id)
    found["gone"] = False
except gitlab.exceptions.GitlabGetError as err:
    found["gone"] = err.response_code
print(json.dumps(found))

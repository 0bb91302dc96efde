"""Drives runners with python-gitlab 3.12, as a GitLab user and a runner would.

`POST /user/runners` (python-gitlab 3.12 has no manager for it: `gl.http_post`), `gl.runners.create` (the
legacy registration), `gl.runners.verify`, `gl.runners.list`, `gl.runners.all`, `gl.runners_all.list`,
`gl.runners.get`, save, `project.runners.list/create/delete`, `group.runners.list`, `runner.jobs.list`,
delete.

Arguments: server URL, an administrator's token, a group ID and two project IDs. Prints one JSON line.
"""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
group_id, project_id, other_id = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
gl = gitlab.Gitlab(url, private_token=token)
found = {}

created = gl.http_post(
    "/user/runners",
    post_data={"runner_type": "project_type", "project_id": project_id, "description": "py", "tag_list": "a,b"},
)
found["created"] = [created["token"].startswith("glrt-"), created["token_expires_at"]]
gl.runners.verify(created["token"])
try:
    gl.runners.verify("glrt-unknown")
    found["verify_unknown"] = None
except gitlab.exceptions.GitlabVerifyError as err:
    found["verify_unknown"] = err.response_code

project = gl.projects.get(project_id)
registered = gl.runners.create({"token": project.runners_token, "description": "legacy", "tag_list": ["x"]})
found["registered"] = registered.token.startswith("glrt-")

runner = gl.runners.get(created["id"])
found["got"] = [runner.description, runner.tag_list, runner.runner_type, runner.status, runner.paused]
runner.description = "renamed"
runner.paused = True
runner.save()
again = gl.runners.get(created["id"])
found["saved"] = [again.description, again.paused]

found["owned"] = sorted(r.id == created["id"] or r.id == registered.id for r in gl.runners.list(all=True))
found["all"] = created["id"] in [r.id for r in gl.runners.all(all=True)]
found["runners_all"] = created["id"] in [r.id for r in gl.runners_all.list(all=True, type="project_type")]
found["paused_filter"] = [r.id for r in gl.runners.list(paused=True, all=True)] == [created["id"]]

other = gl.projects.get(other_id, lazy=True)
enabled = other.runners.create({"runner_id": created["id"]})
found["enabled"] = enabled.id == created["id"]
found["project_list"] = created["id"] in [r.id for r in other.runners.list(all=True)]
other.runners.delete(created["id"])
found["disabled"] = created["id"] not in [r.id for r in other.runners.list(all=True, type="project_type")]
group = gl.groups.get(group_id, lazy=True)
found["group_list"] = isinstance(group.runners.list(all=True), list)
found["jobs"] = runner.jobs.list(all=True)

again.delete()
try:
    gl.runners.get(created["id"])
    found["deleted"] = False
except gitlab.exceptions.GitlabGetError as err:
    found["deleted"] = err.response_code
print(json.dumps(found))

"""Merge request pipelines and commit statuses with python-gitlab 3.12.

Arguments: server URL, a Maintainer's token, the project ID (with a README on main, requiring a
successful pipeline to merge). Prints one JSON line of findings.
"""
import json
import sys
import time

import gitlab

url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)

CONFIG = """test:
  script: echo test
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
"""


def until(read, done):
    value = read()
    for _ in range(100):
        if done(value):
            return value
        time.sleep(0.2)
        value = read()
    return value


project.branches.create({"branch": "py/feature", "ref": "main"})
project.files.create(
    {"file_path": ".gitlab-ci.yml", "branch": "py/feature", "content": CONFIG, "commit_message": "CI"}
)
mr = project.mergerequests.create(
    {"source_branch": "py/feature", "target_branch": "main", "title": "Pipelines from python"}
)
head = mr.sha

# The pipeline made when the merge request opened, then one on request.
listed = until(lambda: mr.pipelines.list(), lambda items: len(items) >= 1)
created = mr.pipelines.create()
after = mr.pipelines.list(get_all=True)

# A commit status on the head: the statuses API, then the merge when the pipeline succeeds.
commit = project.commits.get(head)
status = commit.statuses.create({"state": "running", "name": "py", "ref": "py/feature"})
statuses = commit.statuses.list(get_all=True)
mr = project.mergerequests.get(mr.iid)
before = mr.detailed_merge_status
mr.merge(merge_when_pipeline_succeeds=True)
waiting = project.mergerequests.get(mr.iid)
commit.statuses.create({"state": "success", "name": "py", "ref": "py/feature"})
merged = until(lambda: project.mergerequests.get(mr.iid), lambda m: m.state == "merged")
commit = project.commits.get(head)

print(
    json.dumps(
        {
            "opened": [listed[0].source, listed[0].sha == head],
            "created": [created["source"] if isinstance(created, dict) else created.source],
            "listed": len(after) >= 2,
            "status": [status.status, status.name, status.ref],
            "statuses": sorted(s.name for s in statuses),
            "before": before,
            "waiting": [waiting.state, waiting.merge_when_pipeline_succeeds],
            "merged": merged.state,
            "commit": [commit.status, commit.last_pipeline["source"]],
        }
    )
)

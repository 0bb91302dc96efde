"""Turns on authors' approval of their own merge requests with python-gitlab's `project.save()`, as a
GitLab user would, then approves the author's own merge request.

Arguments: server URL, the author's token, the project id and the iid of the author's open merge request.
Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token, project_id, iid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)
mr = project.mergerequests.get(iid)

try:
    mr.approve()
    before = 201
except gitlab.exceptions.GitlabError as e:
    before = e.response_code

project.merge_requests_author_approval = True
project.approvals_before_merge = 2
project.save()
saved = project.approvals_before_merge
settings = project.approvals.get()

mr.approve()
approvals = mr.approvals.get()
print(
    json.dumps(
        {
            "before": before,
            "saved": saved,
            "settings": [settings.merge_requests_author_approval, settings.approvals_before_merge],
            "approved_by": [a["user"]["username"] for a in approvals.approved_by],
        }
    )
)

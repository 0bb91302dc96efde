"""Drives a merge request from a fork into its upstream with python-gitlab. Prints one JSON line of findings."""
import json
import sys

import gitlab

url, contributor_token, owner_token, upstream_id = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
contributor = gitlab.Gitlab(url, private_token=contributor_token)
owner = gitlab.Gitlab(url, private_token=owner_token)

fork = contributor.projects.get(contributor.projects.get(upstream_id).forks.create({}).id)
head = fork.commits.create({
    "branch": "py-feature",
    "start_branch": "main",
    "commit_message": "Add a file from the fork",
    "actions": [{"action": "create", "file_path": "py.txt", "content": "from python\n"}],
})
mr = fork.mergerequests.create({
    "source_branch": "py-feature",
    "target_branch": "main",
    "target_project_id": upstream_id,
    "title": "From the fork",
    "allow_collaboration": True,
})

try:
    fork.mergerequests.create({
        "source_branch": "py-feature",
        "target_branch": "main",
        "target_project_id": upstream_id,
        "title": "Again",
    })
    again = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    again = e.response_code

upstream = owner.projects.get(upstream_id)
seen = upstream.mergerequests.get(mr.iid)
changes = seen.changes()
commits = [c.id for c in seen.commits()]

# Collaboration: the upstream's owner commits to the fork's source branch.
pushed = owner.projects.get(fork.id, lazy=True).commits.create({
    "branch": "py-feature",
    "commit_message": "A fix from upstream",
    "actions": [{"action": "create", "file_path": "fix.txt", "content": "fix\n"}],
})

print(json.dumps({
    "created": [mr.project_id, mr.source_project_id, mr.target_project_id, mr.iid],
    "allow": [mr.allow_collaboration, mr.allow_maintainer_to_push],
    "web_url": mr.web_url.endswith(f"/{upstream.path_with_namespace}/-/merge_requests/{mr.iid}"),
    "again": again,
    "seen": [seen.source_project_id, seen.sha == head.id],
    "changes": [c["new_path"] for c in changes["changes"]],
    "commits": commits == [head.id],
    "pushed": pushed.id != head.id,
}))

"""Drives merge requests with python-gitlab, as a GitLab user would.

Arguments: server URL, a Developer's token, the project ID (with a README on main) and the ID of a
Reporter of the project. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
project_id, reporter_id = int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)


def error_of(call):
    try:
        call()
        return "no error"
    except gitlab.exceptions.GitlabError as e:
        return [e.response_code, e.error_message]


# A branch with one commit, then a merge request from it.
project.commits.create(
    {
        "branch": "py/feature",
        "start_branch": "main",
        "commit_message": "Add the parser",
        "actions": [{"action": "create", "file_path": "parser.py", "content": "print('hi')\n"}],
    }
)
mr = project.mergerequests.create(
    {
        "source_branch": "py/feature",
        "target_branch": "main",
        "title": "Add the parser",
        "description": "- [ ] tests",
        "assignee_ids": [reporter_id],
    }
)
created = [mr.iid, mr.state, mr.draft, mr.references["short"], mr.assignee["id"]]

# Edit through save(): python-gitlab sends only what changed.
fetched = project.mergerequests.get(mr.iid)
fetched.title = "Draft: Add the parser"
fetched.save()
after_save = [fetched.title, fetched.draft, project.mergerequests.get(mr.iid).draft]

listed = [m.iid for m in project.mergerequests.list(state="opened", get_all=True)]
by_author = [m.iid for m in project.mergerequests.list(author_id=fetched.author["id"], wip="yes", get_all=True)]
by_iids = [m.iid for m in project.mergerequests.list(iids=[mr.iid], get_all=True)]
commits = [c.title for c in fetched.commits()]
changes = [c["new_path"] for c in fetched.changes()["changes"]]
versions = [v.head_commit_sha == fetched.sha for v in fetched.diffs.list(get_all=True)]
participants = [p["id"] for p in fetched.participants()]
estimate = fetched.time_estimate("1h30m")["human_time_estimate"]
spent = fetched.add_spent_time("30m")["total_time_spent"]
duplicate = error_of(
    lambda: project.mergerequests.create({"source_branch": "py/feature", "target_branch": "main", "title": "Again"})
)
missing = error_of(
    lambda: project.mergerequests.create({"source_branch": "py/none", "target_branch": "main", "title": "None"})
)
# Labels (unknown names are created) and a milestone, then the list filters on them.
milestone = project.milestones.create({"title": "py-v1"})
fetched.labels = ["bug", "parser"]
fetched.milestone_id = milestone.id
fetched.save()
labelled = [fetched.labels, fetched.milestone["title"]]
by_labels = [m.iid for m in project.mergerequests.list(labels=["BUG", "parser"], milestone="py-v1", get_all=True)]
without = [m.iid for m in project.mergerequests.list(labels=["None"], get_all=True)]
fetched.state_event = "close"
fetched.save()
closed = project.mergerequests.get(mr.iid).state
print(
    json.dumps(
        {
            "created": created,
            "after_save": after_save,
            "labelled": labelled,
            "by_labels": by_labels,
            "without": without,
            "listed": listed,
            "by_author": by_author,
            "by_iids": by_iids,
            "commits": commits,
            "changes": changes,
            "versions": versions,
            "participants": participants,
            "estimate": estimate,
            "spent": spent,
            "duplicate": duplicate,
            "missing": missing,
            "closed": closed,
        }
    )
)

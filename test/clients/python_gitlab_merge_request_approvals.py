"""Drives merge request approvals with python-gitlab, as GitLab users would.

Arguments: server URL, then a JSON object: project id, the iids of two open merge requests and their source
branches, and the tokens of the owner, two Developers, a Maintainer and a project access token's bot.
Prints one JSON line of findings.
"""
import json
import sys
import time

import gitlab

url = sys.argv[1]
args = json.loads(sys.argv[2])
pid = args["project_id"]


def client(token):
    return gitlab.Gitlab(url, private_token=token)


owner, dev1, dev2, maintainer, bot = (
    client(args[name]) for name in ["owner", "dev1", "dev2", "maintainer", "bot"]
)
project = owner.projects.get(pid)

# Configure: reset on push (the default, said again) and a rule of two approvals from the two Developers.
settings = project.approvals.get()
settings.reset_approvals_on_push = True
settings.merge_requests_author_approval = False
settings.save()
configured = project.approvals.get()
rule = project.approvalrules.create(
    {"name": "Two developers", "approvals_required": 2, "user_ids": [args["dev1_id"], args["dev2_id"]]}
)
rules = [[r.name, r.approvals_required] for r in project.approvalrules.list(get_all=True)]


def mr_of(gl, iid):
    return gl.projects.get(pid, lazy=True).mergerequests.get(iid)


# The first merge request was opened before the rule: it follows the project's rule.
first = args["first"]
before = mr_of(owner, first).approvals.get()
mr_of(dev1, first).approve()
middle = mr_of(owner, first).approvals.get().approvals_left
mr_of(dev2, first).approve()
after = mr_of(owner, first).approvals.get()
state = mr_of(owner, first).approval_state.get()
merged = mr_of(maintainer, first).merge()

# The second: approved, then a new commit on its source branch resets the approvals, with a system note.
second = args["second"]
mr_of(dev1, second).approve()
dev1.projects.get(pid, lazy=True).commits.create(
    {
        "branch": args["second_branch"],
        "commit_message": "One more",
        "actions": [{"action": "create", "file_path": "more.txt", "content": "more\n"}],
    }
)
deadline = time.time() + 20
reset = mr_of(owner, second).approvals.get()
while reset.approved_by and time.time() < deadline:
    time.sleep(0.2)
    reset = mr_of(owner, second).approvals.get()
notes = [n.body for n in mr_of(owner, second).notes.list(get_all=True) if n.system]

# Resetting approvals: a human gets 401, the project token's bot clears them.
mr_of(dev2, second).approve()
try:
    maintainer.http_put(f"/projects/{pid}/merge_requests/{second}/reset_approvals")
    human = None
except gitlab.exceptions.GitlabError as err:
    human = err.response_code
bot.http_put(f"/projects/{pid}/merge_requests/{second}/reset_approvals")
after_bot = len(mr_of(owner, second).approvals.get().approved_by)

print(
    json.dumps(
        {
            "configured": [configured.reset_approvals_on_push, configured.merge_requests_author_approval],
            "rule": [rule.name, rule.approvals_required, sorted(u["id"] for u in rule.users)],
            "rules": rules,
            "before": [before.approvals_required, before.approvals_left],
            "middle": middle,
            "after": [after.approvals_left, after.approved, len(after.approved_by)],
            "state": [[r["name"], r["approved"]] for r in state.rules],
            "merged": merged["state"],
            "reset": len(reset.approved_by),
            "note": any(body.startswith("reset approvals from @") for body in notes),
            "human_reset": human,
            "after_bot": after_bot,
        }
    )
)

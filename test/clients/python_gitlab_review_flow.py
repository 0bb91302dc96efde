"""Drives issue 12's review flow with python-gitlab, as GitLab users would: a group's custom role that lets a
Guest approve, a two-approval rule, a merge, approvals reset by a push, draft notes published at once, and
a project token's bot resetting approvals.

python-gitlab 3.12 has no member role or draft note managers: roles go through `http_*` (as Bearer, as the
member role endpoints document), and draft notes through a manager declared as python-gitlab 4 does.

Arguments: server URL, then a JSON object: project and group ids, the tokens of the administrator, a
Developer, a plain Guest, the user to become a Guest with the role, and a project token's bot; the
Developer's and that user's ids. The project has open merge requests !1 (`first`) and !2 (`second`).
Prints one JSON line of findings.
"""
import json
import sys
import time

import gitlab
from gitlab.base import RESTManager, RESTObject
from gitlab.mixins import CRUDMixin, ObjectDeleteMixin, SaveMixin
from gitlab.types import RequiredOptional


class ProjectMergeRequestDraftNote(ObjectDeleteMixin, SaveMixin, RESTObject):
    pass


class ProjectMergeRequestDraftNoteManager(CRUDMixin, RESTManager):
    _path = "/projects/{project_id}/merge_requests/{mr_iid}/draft_notes"
    _obj_cls = ProjectMergeRequestDraftNote
    _from_parent_attrs = {"project_id": "project_id", "mr_iid": "iid"}
    _create_attrs = RequiredOptional(
        required=("note",),
        optional=("commit_id", "in_reply_to_discussion_id", "position", "resolve_discussion"),
    )

    def bulk_publish(self, **kwargs):
        self.gitlab.http_post(f"{self.path}/bulk_publish", **kwargs)


url = sys.argv[1]
args = json.loads(sys.argv[2])
pid, gid = args["project_id"], args["group_id"]


def client(token):
    return gitlab.Gitlab(url, private_token=token)


admin, developer, guest, reviewer, bot = (
    client(args[name]) for name in ["admin", "developer", "guest", "reviewer", "bot"]
)
project = admin.projects.get(pid)


def mr_of(gl, iid):
    return gl.projects.get(pid, lazy=True).mergerequests.get(iid)


def status_of(call):
    try:
        call()
        return None
    except gitlab.exceptions.GitlabError as err:
        return err.response_code


# a. A role of the top-level group: Guest, plus admin_merge_request; given with member_role_id.
bearer = gitlab.Gitlab(url, oauth_token=args["admin"])
role = bearer.http_post(
    f"/groups/{gid}/member_roles",
    post_data={"name": "Guest approver", "base_access_level": 10, "admin_merge_request": True},
)
member = project.members.create(
    {"user_id": args["reviewer_id"], "access_level": 10, "member_role_id": role["id"]}
)

# b. Approvals configured, and a rule of two approvals from the Developer and the role's Guest.
settings = project.approvals.get()
settings.reset_approvals_on_push = True
settings.merge_requests_author_approval = False
settings.save()
rule = project.approvalrules.create(
    {"name": "Two reviewers", "approvals_required": 2, "user_ids": [args["developer_id"], args["reviewer_id"]]}
)

# c. 2 -> 1 -> 0; the merge is refused until the second approval.
left, status = [], []


def observe(iid):
    left.append(mr_of(admin, iid).approvals.get().approvals_left)
    # `checking` is transient: read past it, as clients poll.
    deadline = time.time() + 20
    current = mr_of(admin, iid).detailed_merge_status
    while current in ("checking", "unchecked") and time.time() < deadline:
        time.sleep(0.2)
        current = mr_of(admin, iid).detailed_merge_status
    status.append(current)


observe(1)
mr_of(developer, 1).approve()
observe(1)
early_merge = status_of(lambda: mr_of(admin, 1).merge())
mr_of(reviewer, 1).approve()
observe(1)
approved_by = [a["user"]["id"] for a in mr_of(admin, 1).approvals.get().approved_by]
merged = mr_of(admin, 1).merge()["state"]

# d. A plain Guest may not approve.
guest_refused = status_of(lambda: mr_of(guest, 2).approve())

# e. Both approve !2; a new commit on its source branch resets them, with the system note.
mr_of(developer, 2).approve()
mr_of(reviewer, 2).approve()
project.commits.create(
    {
        "branch": "second",
        "commit_message": "More",
        "actions": [{"action": "create", "file_path": "more.txt", "content": "more\n"}],
    }
)
deadline = time.time() + 20
reset = mr_of(admin, 2).approvals.get()
while reset.approved_by and time.time() < deadline:
    time.sleep(0.2)
    reset = mr_of(admin, 2).approvals.get()
notes = [n.body for n in mr_of(admin, 2).notes.list(get_all=True) if n.system]

# f. Three drafts by the role's Guest: on a diff line, into the Developer's thread, a comment; published at once.
thread = mr_of(developer, 2).discussions.create({"body": "Why more?"})
mr = mr_of(reviewer, 2)
mr.draft_notes = ProjectMergeRequestDraftNoteManager(reviewer, parent=mr)
refs = mr.diff_refs
mr.draft_notes.create(
    {
        "note": "Say why.",
        "position": {
            "base_sha": refs["base_sha"],
            "start_sha": refs["start_sha"],
            "head_sha": refs["head_sha"],
            "position_type": "text",
            "old_path": "more.txt",
            "new_path": "more.txt",
            "new_line": 1,
        },
    }
)
# GitLab keeps one draft per thread and author: the third is a comment of its own.
mr.draft_notes.create({"note": "It is needed.", "in_reply_to_discussion_id": thread.id})
mr.draft_notes.create({"note": "Looks good otherwise."})
drafts = len(mr.draft_notes.list())
mr.draft_notes.bulk_publish()
discussions = mr_of(admin, 2).discussions.list(get_all=True)
in_thread = [n["body"] for d in discussions if d.id == thread.id for n in d.attributes["notes"]]
diff = [
    [[n["body"], n["position"]["new_line"]] for n in d.attributes["notes"]]
    for d in discussions
    if d.attributes["notes"][0]["type"] == "DiffNote"
]
single = [
    d.attributes["notes"][0]["body"]
    for d in discussions
    if d.attributes["individual_note"] and not d.attributes["notes"][0]["system"]
]

# g. The project token's bot resets approvals; a human gets 401.
mr_of(developer, 2).approve()
before_bot = mr_of(admin, 2).approvals.get().approvals_left
human_reset = status_of(lambda: admin.http_put(f"/projects/{pid}/merge_requests/2/reset_approvals"))
bot.http_put(f"/projects/{pid}/merge_requests/2/reset_approvals")
after_bot = mr_of(admin, 2).approvals.get().approvals_left

print(
    json.dumps(
        {
            "role": [role["group_id"], role["base_access_level"], role["admin_merge_request"]],
            "member_role": member.member_role["id"] == role["id"],
            "eligible": sorted(u["id"] for u in rule.eligible_approvers),
            "left": left,
            "status": status,
            "early_merge": early_merge,
            "approved_by": approved_by,
            "merged": merged,
            "guest": guest_refused,
            "reset": [reset.approved_by, reset.approvals_left],
            "reset_note": any(body.startswith("reset approvals from @") for body in notes),
            "drafts": drafts,
            "published": [len(mr.draft_notes.list()), in_thread, diff, single],
            "human_reset": human_reset,
            "after_bot": [before_bot, after_bot],
        }
    )
)

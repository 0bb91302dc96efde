"""Merges merge requests with python-gitlab, as its own functional tests do.

Arguments: server URL, a Maintainer's token, the project ID (with a README on main), the Maintainer's
username and an administrator's token (for the queue's metrics). Prints one JSON line of findings.
"""
import json
import sys
import time

import gitlab

url, token, project_id, username = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
gl = gitlab.Gitlab(url, private_token=token)
admin = gitlab.Gitlab(url, private_token=sys.argv[5])
project = gl.projects.get(project_id)


def wait_for_queue():
    """python-gitlab's wait_for_sidekiq: until no process is busy."""
    for _ in range(100):
        time.sleep(0.25)
        busy = any(p["busy"] for p in admin.sidekiq.process_metrics()["processes"])
        if not busy:
            return True
    return False


def settled(mr):
    for _ in range(100):
        mr = project.mergerequests.get(mr.iid, include_rebase_in_progress=True)
        if mr.merge_status not in ("checking", "unchecked") and not mr.rebase_in_progress:
            return mr
        time.sleep(0.2)
    return mr


def error_of(call):
    try:
        call()
        return "no error"
    except gitlab.exceptions.GitlabError as e:
        return [type(e).__name__, e.response_code]


def merge_request(source_branch, content="Initial content"):
    project.branches.create({"branch": source_branch, "ref": "main"})
    project.files.create(
        {
            "file_path": f"README.{source_branch}",
            "branch": source_branch,
            "content": content,
            "commit_message": "New commit in new branch",
        }
    )
    mr = project.mergerequests.create(
        {
            "source_branch": source_branch,
            "target_branch": "main",
            "title": "Should remove source branch",
            "remove_source_branch": True,
        }
    )
    return settled(mr)


mr = merge_request("py-merge")
mr.notes.create({"body": "Looks good"})
thread = mr.discussions.create({"body": "One question"})
thread.resolved = True
thread.save()
resolved = mr.discussions.get(thread.id).attributes["notes"][0]["resolved"]
merge_ref = mr.merge_ref()["commit_id"]
rebase = mr.rebase()
mr = settled(mr)
mr.merge(should_remove_source_branch=True)
queue_idle = wait_for_queue()
branch_gone = error_of(lambda: project.branches.get("py-merge"))
merged = project.mergerequests.get(mr.iid)
main = project.commits.get("main")

# A conflicting merge request: no merge ref, and the merge is refused.
conflicting = merge_request("py-conflict", content="Mine")
project.files.create(
    {"file_path": "README.py-conflict", "branch": "main", "content": "Other", "commit_message": "On main"}
)
merge_ref_refused = error_of(conflicting.merge_ref)
merge_refused = error_of(conflicting.merge)
print(
    json.dumps(
        {
            "resolved": resolved,
            "merge_ref_parents": project.commits.get(merge_ref).parent_ids[1] == mr.sha,
            "rebase": rebase,
            "queue_idle": queue_idle,
            "branch_gone": branch_gone,
            "merged": [merged.state, merged.merged_by["username"], merged.merged_at is not None],
            "main": [main.id == merged.merge_commit_sha, len(main.parent_ids)],
            "merge_ref_refused": merge_ref_refused,
            "merge_refused": merge_refused,
        }
    )
)

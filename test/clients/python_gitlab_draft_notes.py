"""Drives draft notes with python-gitlab, as a reviewer would: three drafts (one on a diff line, two
replies, one of them resolving its thread), bulk published at once.

python-gitlab 3.12 (Debian's) predates its draft notes manager (`mr.draft_notes`, python-gitlab 4.0); this
script declares it as python-gitlab 4 does, on 3.12's own mixins, so the requests are the client's.

Arguments: server URL, the reviewer's token, the project ID, the iid of a merge request, and the ids of two
of its threads. Prints one JSON line of findings.
"""
import json
import sys

import gitlab
from gitlab.base import RESTManager, RESTObject
from gitlab.mixins import CRUDMixin, ObjectDeleteMixin, SaveMixin
from gitlab.types import RequiredOptional


class ProjectMergeRequestDraftNote(ObjectDeleteMixin, SaveMixin, RESTObject):
    def publish(self, **kwargs):
        # python-gitlab 4 sends this PUT through http_put, which 3.12 cannot give a 204 to (it parses JSON).
        path = f"{self.manager.path}/{self.encoded_id}/publish"
        self.manager.gitlab.http_request("put", path, **kwargs)


class ProjectMergeRequestDraftNoteManager(CRUDMixin, RESTManager):
    _path = "/projects/{project_id}/merge_requests/{mr_iid}/draft_notes"
    _obj_cls = ProjectMergeRequestDraftNote
    _from_parent_attrs = {"project_id": "project_id", "mr_iid": "iid"}
    _create_attrs = RequiredOptional(
        required=("note",),
        optional=("commit_id", "in_reply_to_discussion_id", "position", "resolve_discussion"),
    )
    _update_attrs = RequiredOptional(optional=("position",))

    def bulk_publish(self, **kwargs):
        self.gitlab.http_post(f"{self.path}/bulk_publish", **kwargs)


url, token = sys.argv[1], sys.argv[2]
project_id, iid = int(sys.argv[3]), int(sys.argv[4])
open_thread, resolved_thread = sys.argv[5], sys.argv[6]
gl = gitlab.Gitlab(url, private_token=token)
mr = gl.projects.get(project_id, lazy=True).mergerequests.get(iid)
mr.draft_notes = ProjectMergeRequestDraftNoteManager(gl, parent=mr)
refs = mr.diff_refs

on_line = mr.draft_notes.create(
    {
        "note": "This line is new.",
        "position": {
            "base_sha": refs["base_sha"],
            "start_sha": refs["start_sha"],
            "head_sha": refs["head_sha"],
            "position_type": "text",
            "old_path": "lib.txt",
            "new_path": "lib.txt",
            "new_line": 4,
        },
    }
)
reply = mr.draft_notes.create({"note": "Agreed.", "in_reply_to_discussion_id": open_thread})
resolving = mr.draft_notes.create(
    {"note": "Fixed.", "in_reply_to_discussion_id": resolved_thread, "resolve_discussion": True}
)
reply.note = "Agreed, mostly."
reply.save()
fetched = mr.draft_notes.get(reply.id)
listed = [[d.note, d.discussion_id, d.resolve_discussion] for d in mr.draft_notes.list()]

mr.draft_notes.bulk_publish()

discussions = {d.id: d for d in mr.discussions.list(get_all=True)}
diff = [d for d in discussions.values() if d.attributes["notes"][0]["type"] == "DiffNote"]
summary = lambda d: [[n["body"], n.get("resolved")] for n in d.attributes["notes"]]
print(
    json.dumps(
        {
            "line_code": on_line.line_code,
            "position": [on_line.position["position_type"], on_line.position["new_line"]],
            "fetched": fetched.note,
            "listed": listed,
            "left": len(mr.draft_notes.list()),
            "diff": [[n["body"], n["position"]["new_line"]] for n in diff[0].attributes["notes"]],
            "open": summary(discussions[open_thread]),
            "resolved": summary(discussions[resolved_thread]),
        }
    )
)

"""Reads a merge request's resource events with python-gitlab, as its functional tests do.

Arguments: server URL, a Developer's token, the project ID, the iid of an open merge request and the id of
a project milestone. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
project_id, iid, milestone_id = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id, lazy=True)

# Labels: save, then list and get the label events.
mr = project.mergerequests.get(iid)
mr.labels = ["bug", "feature"]
mr.save()
label_events = mr.resourcelabelevents.list()
label_event = mr.resourcelabelevents.get(label_events[0].id)

# Milestone: save, then list and get the milestone events.
mr = project.mergerequests.get(iid)
mr.milestone_id = milestone_id
mr.save()
milestone_events = mr.resourcemilestoneevents.list()
milestone_event = mr.resourcemilestoneevents.get(milestone_events[0].id)

# State: close, then list and get the state events.
mr = project.mergerequests.get(iid)
mr.state_event = "close"
mr.save()
state_events = mr.resourcestateevents.list()
state_event = mr.resourcestateevents.get(state_events[0].id)

try:
    mr.resourcelabelevents.get(2147483647)
    missing = None
except gitlab.exceptions.GitlabGetError as err:
    missing = err.response_code

print(
    json.dumps(
        {
            "labels": [[e.label["name"], e.action, e.resource_type, e.resource_id == mr.id] for e in label_events],
            "label_event": [label_event.id == label_events[0].id, label_event.user["username"]],
            "milestones": [[e.milestone["id"] == milestone_id, e.action] for e in milestone_events],
            "milestone_event": milestone_event.milestone["title"],
            "states": [e.state for e in state_events],
            "state_event": state_event.state,
            "missing": missing,
        }
    )
)

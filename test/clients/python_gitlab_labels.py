"""Drives labels and milestones with python-gitlab, as a GitLab user would. Prints one JSON line of findings."""
import json
import sys

import gitlab

url, token, project_id, group_id = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id, lazy=True)
group = gl.groups.get(group_id, lazy=True)

# Group labels, which the project inherits.
security = group.labels.create({"name": "security", "color": "#FF0000"})
security.description = "Vulnerabilities"
security.save()
group_labels = [(l.name, l.description) for l in group.labels.list(get_all=True)]

# Project labels.
bug = project.labels.create({"name": "bug", "color": "red", "description": "Broken", "priority": 2})
project.labels.create({"name": "docs", "color": "#FFF"})
paged = [l.name for l in project.labels.list(iterator=True, per_page=1)]
own = [l.name for l in project.labels.list(get_all=True, include_ancestor_groups=False)]
fetched = project.labels.get("bug")
fetched.new_name = "defect"
fetched.color = "#428BCA"
fetched.save()
renamed = project.labels.get("defect")
try:
    project.labels.create({"name": "defect", "color": "#000"})
    duplicate = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    duplicate = [e.response_code, e.error_message]
renamed.delete()
try:
    project.labels.get("defect")
    after_delete = "no error"
except gitlab.exceptions.GitlabGetError as e:
    after_delete = [e.response_code, e.error_message]

# Subscriptions: a project label, then the group label in the project and at the group level.
triage = project.labels.create({"name": "triage", "color": "#FFAA00"})
triage.subscribe()
subscribed_after = triage.subscribed
try:
    triage.subscribe()
    subscribe_again = "no error"
except gitlab.exceptions.GitlabSubscribeError as e:
    subscribe_again = e.response_code
triage.unsubscribe()
unsubscribed_after = triage.subscribed
project.labels.get("security").subscribe()
in_project = project.labels.get("security").subscribed
group.labels.get("security").subscribe()
levels = [in_project, project.labels.get("security").subscribed, group.labels.get("security").subscribed]

# Promotion: the project label becomes the group's, with its id.
promoted = project.labels.get("triage").promote()
promoted_in_group = group.labels.get("triage")

# Project milestones.
v1 = project.milestones.create({"title": "v1.0", "start_date": "2026-03-01", "due_date": "2026-03-31"})
project.milestones.create({"title": "v2.0"})
v1.state_event = "close"
v1.save()
closed = [m.title for m in project.milestones.list(state="closed", get_all=True)]
milestones = [(m.iid, m.title, m.state) for m in project.milestones.list(iterator=True, per_page=1)]
by_iid = [m.title for m in project.milestones.list(iids=[2], get_all=True)]
try:
    project.milestones.create({"title": "v3.0", "start_date": "2026-05-01", "due_date": "2026-04-01"})
    bad_dates = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    bad_dates = [e.response_code, e.error_message]
project.milestones.get(v1.id).delete()
remaining = [m.title for m in project.milestones.list(get_all=True)]

# Group milestones.
q3 = group.milestones.create({"title": "Q3"})
group_milestones = [(m.iid, m.title, m.group_id == group_id) for m in group.milestones.list(get_all=True)]
q3.delete()

print(json.dumps({
    "security": [security.name, security.text_color],
    "group_labels": group_labels,
    "bug": [bug.name, bug.color, bug.text_color, bug.priority, bug.is_project_label],
    "paged": paged,
    "own": own,
    "renamed": [renamed.name, renamed.color, renamed.id == bug.id],
    "duplicate": duplicate,
    "after_delete": after_delete,
    "subscriptions": [subscribed_after, subscribe_again, unsubscribed_after, levels],
    "promoted": [
        promoted["id"] == triage.id,
        promoted["name"],
        promoted_in_group.id == triage.id,
        project.labels.get("triage").is_project_label,
    ],
    "closed": closed,
    "milestones": milestones,
    "by_iid": by_iid,
    "bad_dates": bad_dates,
    "remaining": remaining,
    "group_milestones": group_milestones,
}))

"""Drives the members and sharing endpoints with python-gitlab, as a GitLab user would.

Arguments: server URL, owner token, then the IDs of the project, its group, another group the owner
belongs to, and two users to add. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
project_id, group_id, team_id, ada_id, bob_id = (int(a) for a in sys.argv[3:8])
gl = gitlab.Gitlab(url, private_token=token)

project = gl.projects.get(project_id)
group = gl.groups.get(group_id, lazy=True)

# Project members: create, list, edit through save(), get, delete.
created = project.members.create({"user_id": ada_id, "access_level": gitlab.const.AccessLevel.REPORTER})
direct_before = sorted((m.id, m.access_level) for m in project.members.list(get_all=True))
member = project.members.get(ada_id)
member.access_level = gitlab.const.AccessLevel.DEVELOPER
member.save()
after_save = project.members.get(ada_id).access_level
all_members = {m.id: m.access_level for m in project.members_all.list(get_all=True)}
one_inherited = project.members_all.get(bob_id).access_level
filtered = [m.id for m in project.members_all.list(user_ids=[ada_id], get_all=True)]
paged = project.members_all.list(per_page=1, iterator=True)
paged_ids = [m.id for m in paged]
member.delete()
try:
    project.members.get(ada_id)
    after_delete = "still there"
except gitlab.exceptions.GitlabGetError as e:
    after_delete = [e.response_code, e.error_message]

try:
    project.members.create({"user_id": ada_id, "access_level": 35})
    invalid = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    invalid = [e.response_code, e.error_message]

# Group members.
group_created = group.members.create({"user_id": ada_id, "access_level": gitlab.const.AccessLevel.GUEST})
group_member = group.members.get(ada_id)
group_member.access_level = gitlab.const.AccessLevel.MAINTAINER
group_member.expires_at = "2099-01-31"
group_member.save()
group_direct = sorted(m.id for m in group.members.list(get_all=True))
group_all = sorted(m.id for m in group.members_all.list(get_all=True))
saved = group.members.get(ada_id)
group.members.delete(ada_id)

# Sharing.
project.share(team_id, gitlab.const.AccessLevel.REPORTER)
shared = [(g["group_id"], g["group_access_level"]) for g in gl.projects.get(project_id).shared_with_groups]
try:
    project.share(team_id, gitlab.const.AccessLevel.REPORTER)
    again = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    again = [e.response_code, e.error_message]
project.unshare(team_id)
unshared = gl.projects.get(project_id).shared_with_groups

print(json.dumps({
    "created": [created.id, created.access_level, created.username],
    "direct_before": direct_before,
    "after_save": after_save,
    "all_members": {str(k): v for k, v in all_members.items()},
    "one_inherited": one_inherited,
    "filtered": filtered,
    "paged_ids": sorted(paged_ids),
    "paged_total": paged.total,
    "after_delete": after_delete,
    "invalid": invalid,
    "group_created": [group_created.id, group_created.access_level],
    "group_saved": [saved.access_level, saved.expires_at],
    "group_direct": group_direct,
    "group_all": group_all,
    "shared": shared,
    "again": again,
    "unshared": unshared,
}))

"""Drives custom member roles and a project's push rule with python-gitlab, as a GitLab user would.

python-gitlab 3.12 has no member role managers (`gl.member_roles` came later), so the roles go through its
generic `http_*` calls, with the token as `Authorization: Bearer` (`oauth_token`); the push rule goes
through `project.pushrules`.

Arguments: server URL, an administrator's token, a top-level group ID, a project ID in that group and a
user ID to make a member. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
group_id, project_id, user_id = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
gl = gitlab.Gitlab(url, oauth_token=token)

# Group roles: create, list, give to a member, refuse deleting while in use, then delete.
role = gl.http_post(
    f"/groups/{group_id}/member_roles",
    post_data={"name": "Guest + code", "base_access_level": 10, "read_code": True},
)
listed = [r["id"] for r in gl.http_list(f"/groups/{group_id}/member_roles")]
project = gl.projects.get(project_id)
member = project.members.create({"user_id": user_id, "access_level": 10, "member_role_id": role["id"]})
try:
    gl.http_delete(f"/groups/{group_id}/member_roles/{role['id']}")
    in_use = None
except gitlab.exceptions.GitlabHttpError as err:
    in_use = err.response_code
member.delete()
gl.http_delete(f"/groups/{group_id}/member_roles/{role['id']}")
after = gl.http_list(f"/groups/{group_id}/member_roles")

# Instance roles: create, rename, delete.
instance = gl.http_post("/member_roles", post_data={"name": "Planner plus", "base_access_level": 15})
renamed = gl.http_put(f"/member_roles/{instance['id']}", post_data={"name": "Planner extra", "description": "More"})
gl.http_delete(f"/member_roles/{instance['id']}")

# The push rule: create, read, edit, delete.
rule = project.pushrules.create({"commit_message_regex": "JIRA-\\d+", "deny_delete_tag": True})
fetched = project.pushrules.get()
fetched.max_file_size = 5
fetched.save()
edited = project.pushrules.get()
edited.delete()
# GitLab answers `null` (200) for a project without a push rule, which python-gitlab cannot parse.
try:
    project.pushrules.get()
    after_delete = False
except gitlab.exceptions.GitlabParsingError:
    after_delete = True

print(
    json.dumps(
        {
            "role": [role["group_id"], role["base_access_level"], role["read_code"], role["remove_project"]],
            "listed": listed == [role["id"]],
            "member_role": member.member_role["id"] == role["id"],
            "in_use": in_use,
            "after": after,
            "instance": [instance["group_id"], instance["base_access_level"]],
            "renamed": [renamed["id"] == instance["id"], renamed["name"], renamed["description"]],
            "rule": [rule.commit_message_regex, rule.deny_delete_tag],
            "edited": [edited.max_file_size, edited.commit_message_regex],
            "after_delete": after_delete,
        }
    )
)

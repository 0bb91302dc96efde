"""Drives forge-api's access token endpoints with python-gitlab. Prints one JSON line of findings.

Arguments: URL, an administrator's token, a user's token, that user's ID, and a project and a group the
user owns. python-gitlab 3.12 has no get() or rotate() for these managers: those calls go through its
HTTP layer, which still checks GitLab's wire conventions.
"""
import datetime
import json
import sys

import gitlab

url, admin_token, token, user_id, project_id, group_id = sys.argv[1:7]
user_id, project_id, group_id = int(user_id), int(project_id), int(group_id)
expires = (datetime.date.today() + datetime.timedelta(days=30)).isoformat()

admin = gitlab.Gitlab(url, private_token=admin_token)
gl = gitlab.Gitlab(url, private_token=token)


def status_of(call):
    try:
        call()
        return "no error"
    except gitlab.exceptions.GitlabError as e:
        return e.response_code


# Personal access tokens.
created = admin.users.get(user_id, lazy=True).personal_access_tokens.create(
    {"name": "py", "scopes": ["read_api", "read_user"], "expires_at": expires}
)
own_ids = [t.id for t in gl.personal_access_tokens.list(get_all=True)]
by_user = {t.user_id for t in admin.personal_access_tokens.list(user_id=user_id, iterator=True, per_page=1)}
new_client = gitlab.Gitlab(url, private_token=created.token)
self_info = new_client.http_get("/personal_access_tokens/self")
rotated = gl.http_post(f"/personal_access_tokens/{created.id}/rotate")
old_after_rotation = status_of(lambda: new_client.personal_access_tokens.list())
gl.personal_access_tokens.delete(rotated["id"])
rotated_after_delete = status_of(
    lambda: gitlab.Gitlab(url, private_token=rotated["token"]).http_get("/personal_access_tokens/self")
)

# Project access tokens.
project = gl.projects.get(project_id, lazy=True)
bot_token = project.access_tokens.create(
    {"name": "py-bot", "scopes": ["read_api"], "access_level": 30, "expires_at": expires}
)
listed = [(t.id, t.access_level) for t in project.access_tokens.list(get_all=True)]
bot = gitlab.Gitlab(url, private_token=bot_token.token)
bot_sees = bot.projects.get(project_id).id
fetched = gl.http_get(f"/projects/{project_id}/access_tokens/{bot_token.id}")
invalid = None
try:
    project.access_tokens.create({"name": "bad", "scopes": ["read_user"]})
except gitlab.exceptions.GitlabCreateError as e:
    invalid = [e.response_code, e.error_message]
project.access_tokens.delete(bot_token.id)
bot_after_revoke = status_of(lambda: bot.projects.get(project_id))

# Group access tokens.
group = gl.groups.get(group_id, lazy=True)
group_token = group.access_tokens.create({"name": "py-group-bot", "scopes": ["api"], "expires_at": expires})
group_listed = [t.id for t in group.access_tokens.list(get_all=True)]
group_token.delete()
group_after_revoke = [t.revoked for t in group.access_tokens.list(get_all=True)]

print(json.dumps({
    "created": {"user_id": created.user_id, "scopes": created.scopes, "expires_at": created.expires_at,
                "has_token": created.token.startswith("glpat-")},
    "own_has_created": created.id in own_ids,
    "by_user": sorted(by_user),
    "self_id": self_info["id"] == created.id,
    "rotated_name": rotated["name"],
    "old_after_rotation": old_after_rotation,
    "rotated_after_delete": rotated_after_delete,
    "listed": listed,
    "bot_token_id": bot_token.id,
    "bot_sees": bot_sees,
    "fetched_access_level": fetched["access_level"],
    "invalid": invalid,
    "bot_after_revoke": bot_after_revoke,
    "group_listed": group_listed,
    "group_token_id": group_token.id,
    "group_after_revoke": group_after_revoke,
}))

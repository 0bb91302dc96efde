"""Drives the users API with python-gitlab, as an administrator would. Prints one JSON line of findings.

Arguments: server URL, an administrator's token, a regular user's token, a fresh username.
"""
import json
import sys

import gitlab

url, admin_token, user_token, username = sys.argv[1:5]
admin = gitlab.Gitlab(url, private_token=admin_token)
admin.auth()
regular = gitlab.Gitlab(url, private_token=user_token)
regular.auth()

created = admin.users.create({
    "email": f"{username}@example.com",
    "username": username,
    "name": "Python Person",
    "password": "correct horse battery",
    "skip_confirmation": True,
    "bio": "from python-gitlab",
})
fetched = admin.users.get(created.id)
fetched.name = "Python Renamed"
fetched.projects_limit = 5
fetched.save()
refetched = admin.users.get(created.id)

found = admin.users.list(search=username)
seen_by_user = regular.users.list(search=username)
public = regular.users.get(created.id)

try:
    admin.users.get(99999999)
    missing = "no error"
except gitlab.exceptions.GitlabGetError as e:
    missing = [e.response_code, e.error_message]

try:
    admin.users.create({"email": f"{username}@example.com", "username": f"{username}-2", "name": "Dup",
                        "password": "correct horse battery"})
    duplicate = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    duplicate = [e.response_code, e.error_message]

# Block the regular user: their token stops working until they are unblocked.
target = admin.users.get(regular.user.id)
blocked = target.block()
state_after_block = target.state
try:
    gitlab.Gitlab(url, private_token=user_token).auth()
    while_blocked = "no error"
except gitlab.exceptions.GitlabAuthenticationError as e:
    while_blocked = e.response_code
unblocked = target.unblock()
state_after_unblock = target.state
gitlab.Gitlab(url, private_token=user_token).auth()

print(json.dumps({
    "me": admin.user.username,
    "me_is_admin": admin.user.is_admin,
    "regular_has_email": hasattr(regular.user, "email"),
    "regular_has_is_admin": hasattr(regular.user, "is_admin"),
    "created_username": created.username,
    "created_namespace_id": created.namespace_id,
    "created_by": created.created_by["id"] if created.created_by else None,
    "saved_name": fetched.name,
    "refetched_name": refetched.name,
    "refetched_projects_limit": refetched.projects_limit,
    "found": [u.username for u in found],
    "found_has_email": [hasattr(u, "email") for u in found],
    "seen_by_user": [u.username for u in seen_by_user],
    "seen_by_user_has_email": [hasattr(u, "email") for u in seen_by_user],
    "public_bio": public.bio,
    "public_has_email": hasattr(public, "email"),
    "missing": missing,
    "duplicate": duplicate,
    "blocked": blocked,
    "state_after_block": state_after_block,
    "while_blocked": while_blocked,
    "unblocked": unblocked,
    "state_after_unblock": state_after_unblock,
}))

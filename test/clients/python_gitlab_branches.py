"""Drives the branches and protected branches endpoints with python-gitlab, as a GitLab user would.

Arguments: server URL, a Maintainer's token, the project ID (with a README on main) and the ID of a
Developer of the project. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
project_id, developer_id = int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)


def error_of(call):
    try:
        call()
        return "no error"
    except gitlab.exceptions.GitlabError as e:
        return [e.response_code, e.error_message]


# Branches: create, get by a name with a slash, list with a filter and with pagination, delete.
created = project.branches.create({"branch": "py/feature", "ref": "main"})
project.branches.create({"branch": "py/other", "ref": created.commit["id"]})
fetched = project.branches.get("py/feature")
searched = [b.name for b in project.branches.list(search="^py/", get_all=True)]
paged = [b.name for b in project.branches.list(per_page=1, iterator=True)]
fetched.delete()
deleted = error_of(lambda: project.branches.get("py/feature"))
invalid = error_of(lambda: project.branches.create({"branch": "bad..name", "ref": "main"}))

# Protected branches: protect a wildcard with a named user, get it (python-gitlab sends * as %2A),
# list, refuse a duplicate, unprotect.
rule = project.protectedbranches.create(
    {
        "name": "py/*",
        "push_access_level": gitlab.const.AccessLevel.NO_ACCESS,
        "merge_access_level": gitlab.const.AccessLevel.MAINTAINER,
        "allowed_to_push": [{"user_id": developer_id}],
    }
)
got = project.protectedbranches.get("py/*")
listed = [p.name for p in project.protectedbranches.list(get_all=True)]
duplicate = error_of(lambda: project.protectedbranches.create({"name": "py/*"}))
protected_branch = project.branches.get("py/other")
got.delete()
after_unprotect = error_of(lambda: project.protectedbranches.get("py/*"))

print(
    json.dumps(
        {
            "created": [created.name, created.protected, created.can_push],
            "fetched": fetched.name,
            "searched": searched,
            "paged": paged,
            "deleted": deleted,
            "invalid": invalid,
            "rule_name": rule.name,
            "rule_push": [
                [level["access_level"], level["user_id"]] for level in rule.push_access_levels
            ],
            "got_id": got.id == rule.id,
            "listed": listed,
            "duplicate": duplicate,
            "protected_branch": [protected_branch.protected, protected_branch.developers_can_push],
            "after_unprotect": after_unprotect,
        }
    )
)

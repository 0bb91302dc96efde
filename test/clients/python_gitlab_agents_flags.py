"""Drives cluster agents, agent tokens, feature flag user lists and feature flags with python-gitlab.

python-gitlab 3.12 has no managers for these resources, so this uses its HTTP layer (`http_get`,
`http_post`, `http_put`, `http_delete`, `http_list`), which applies its authentication, JSON handling,
error classes and Link-header pagination, as a script written against GitLab would.

Arguments: server URL, a Maintainer's token, the project ID. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
base = f"/projects/{project_id}"

# Cluster agents and tokens.
agent = gl.http_post(f"{base}/cluster_agents", post_data={"name": "python-agent"})
agents = [a["name"] for a in gl.http_list(f"{base}/cluster_agents", get_all=True)]
tok = gl.http_post(f"{base}/cluster_agents/{agent['id']}/tokens", post_data={"name": "one", "description": "d"})
gl.http_post(f"{base}/cluster_agents/{agent['id']}/tokens", post_data={"name": "two"})
try:
    gl.http_post(f"{base}/cluster_agents/{agent['id']}/tokens", post_data={"name": "three"})
    third = None
except gitlab.exceptions.GitlabHttpError as err:
    third = [err.response_code, err.error_message]
token_list = [t["name"] for t in gl.http_list(f"{base}/cluster_agents/{agent['id']}/tokens", per_page=1, get_all=True)]
one = gl.http_get(f"{base}/cluster_agents/{agent['id']}/tokens/{tok['id']}")
gl.http_delete(f"{base}/cluster_agents/{agent['id']}/tokens/{tok['id']}")
try:
    gl.http_get(f"{base}/cluster_agents/{agent['id']}/tokens/{tok['id']}")
    revoked = None
except gitlab.exceptions.GitlabHttpError as err:
    revoked = err.response_code
gl.http_delete(f"{base}/cluster_agents/{agent['id']}")

# User lists (form-encoded, python-gitlab's default for post_data without files is JSON; both work).
lst = gl.http_post(f"{base}/feature_flags_user_lists", post_data={"name": "py-list", "user_xids": " a, b ,a"})
gl.http_post(f"{base}/feature_flags_user_lists", post_data={"name": "py-other", "user_xids": "c"})
searched = [x["name"] for x in gl.http_list(f"{base}/feature_flags_user_lists", query_data={"search": "other"}, get_all=True)]
updated = gl.http_put(f"{base}/feature_flags_user_lists/{lst['iid']}", post_data={"user_xids": "z"})

# A flag using the list; its parameters as python-gitlab users send them, a JSON string.
flag = gl.http_post(
    f"{base}/feature_flags",
    post_data={
        "name": "py-flag",
        "version": "new_version_flag",
        "strategies": [
            {"name": "gitlabUserList", "parameters": "{}", "user_list_id": lst["id"], "scopes": [{"environment_scope": "*"}]}
        ],
    },
)
try:
    gl.http_delete(f"{base}/feature_flags_user_lists/{lst['iid']}")
    in_use = None
except gitlab.exceptions.GitlabHttpError as err:
    in_use = err.response_code
flags = [f["name"] for f in gl.http_list(f"{base}/feature_flags", get_all=True)]
toggled = gl.http_put(f"{base}/feature_flags/py-flag", post_data={"active": False})["active"]
gl.http_delete(f"{base}/feature_flags/py-flag")
gl.http_delete(f"{base}/feature_flags_user_lists/{lst['iid']}")

print(
    json.dumps(
        {
            "agent": [agent["name"], agent["config_project"]["id"] == project_id],
            "agents": agents,
            "token": [tok["token"].startswith("glagent-"), tok["status"]],
            "third": third,
            "tokens": token_list,
            "last_used_at": "last_used_at" in one,
            "revoked": revoked,
            "list": [lst["iid"], lst["user_xids"]],
            "searched": searched,
            "updated": updated["user_xids"],
            "flag": [flag["name"], flag["strategies"][0]["user_list"]["name"]],
            "in_use": in_use,
            "flags": flags,
            "toggled": toggled,
        }
    )
)

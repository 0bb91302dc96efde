"""Starts housekeeping with python-gitlab, as an administrator's script would. Prints what it saw."""
import json
import sys

import gitlab

url, token, project_id = sys.argv[1], sys.argv[2], sys.argv[3]
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id, lazy=True)
project.housekeeping()
try:
    gl.projects.get(999999, lazy=True).housekeeping()
    missing = "no error"
except gitlab.exceptions.GitlabHousekeepingError as e:
    missing = e.response_code
print(json.dumps({"started": True, "missing": missing}))

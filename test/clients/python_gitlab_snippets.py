"""Drives project and personal snippets with python-gitlab, as a GitLab user would.

Arguments: server URL, a project Maintainer's token, an administrator's token and the project ID.
Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token, admin_token = sys.argv[1], sys.argv[2], sys.argv[3]
project_id = int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
admin = gitlab.Gitlab(url, private_token=admin_token)
project = gl.projects.get(project_id, lazy=True)

# Project snippets: create (the single-file parameters python-gitlab sends), read, change, list, delete.
created = project.snippets.create(
    {"title": "py", "file_name": "hello.py", "content": "print('hi')\n", "visibility": "private", "description": "d"}
)
snippet = project.snippets.get(created.id)
first_content = snippet.content().decode()
snippet.title = "renamed"
snippet.content = "print('bye')\n"
snippet.save()
changed = project.snippets.get(created.id)
changed_content = changed.content().decode()
listed = [s.title for s in project.snippets.list(get_all=True)]
detail = admin.projects.get(project_id, lazy=True).snippets.get(created.id).user_agent_detail()
try:
    snippet.user_agent_detail()
    refused_detail = None
except gitlab.exceptions.GitlabGetError as err:
    refused_detail = err.response_code
changed.delete()
try:
    project.snippets.get(created.id)
    after_delete = None
except gitlab.exceptions.GitlabGetError as err:
    after_delete = [err.response_code, err.error_message]

# Personal snippets.
personal = gl.snippets.create({"title": "mine", "file_name": "notes.md", "content": "# notes\n", "visibility": "public"})
own = [s.id == personal.id for s in gl.snippets.list(get_all=True)]
public = any(s.id == personal.id for s in gl.snippets.public(get_all=True))
everything = any(s["id"] == personal.id for s in gl.http_get("/snippets/all"))
fetched = gl.snippets.get(personal.id)
personal_content = fetched.content().decode()
fetched.title = "mine, renamed"
fetched.save()
personal_detail = admin.snippets.get(personal.id).user_agent_detail()
personal_title = gl.snippets.get(personal.id).title
gl.snippets.delete(personal.id)

print(
    json.dumps(
        {
            "created": [created.title, created.file_name, created.visibility, created.project_id == project_id],
            "content": first_content,
            "changed": [changed.title, changed.files[0]["path"]],
            "changed_content": changed_content,
            "listed": listed,
            "detail": [detail["user_agent"].startswith("python-gitlab"), detail["akismet_submitted"]],
            "refused_detail": refused_detail,
            "after_delete": after_delete,
            "personal": [personal.project_id, personal.http_url_to_repo.endswith(f"/snippets/{personal.id}.git")],
            "own": own,
            "public": public,
            "all": everything,
            "personal_content": personal_content,
            "personal_title": personal_title,
            "personal_detail": personal_detail["user_agent"].startswith("python-gitlab"),
            "personal_after_delete": any(s.id == personal.id for s in gl.snippets.list(get_all=True)),
        }
    )
)

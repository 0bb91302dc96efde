"""Drives the repository files API with python-gitlab. Prints one JSON line of findings."""
import base64
import json
import sys

import gitlab

url, token, project_id = sys.argv[1], sys.argv[2], sys.argv[3]
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)

created = project.files.create({
    "file_path": "docs/guide.md",
    "branch": "main",
    "content": "# Guide\n",
    "commit_message": "Add the guide",
})
fetched = project.files.get(file_path="docs/guide.md", ref="main")
first_content = fetched.decode().decode()
file_name = fetched.file_name

# Edit through the object, as python-gitlab's save() does it (PUT with the changed attributes).
fetched.content = "# Guide\n\nMore.\n"
fetched.save(branch="main", commit_message="Expand the guide")
raw = project.files.raw(file_path="docs/guide.md", ref="main")
blame = project.files.blame(file_path="docs/guide.md", ref="main")

project.files.create({
    "file_path": "bin/tool",
    "branch": "main",
    "content": base64.b64encode(b"\x7fELF\x00\x01").decode(),
    "encoding": "base64",
    "commit_message": "Add a binary",
})
binary = project.files.raw(file_path="bin/tool", ref="main")

project.files.update("bin/tool", {"branch": "main", "content": "text now", "commit_message": "Replace the binary"})
updated = project.files.get(file_path="bin/tool", ref="main").decode().decode()

project.files.delete(file_path="bin/tool", branch="main", commit_message="Remove the tool")
try:
    project.files.get(file_path="bin/tool", ref="main")
    after_delete = "no error"
except gitlab.exceptions.GitlabGetError as e:
    after_delete = [e.response_code, e.error_message]

try:
    project.files.create({
        "file_path": "docs/guide.md",
        "branch": "main",
        "content": "again",
        "commit_message": "again",
    })
    duplicate = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    duplicate = [e.response_code, e.error_message]

print(json.dumps({
    "created": {"file_path": created.file_path, "branch": created.branch},
    "first_content": first_content,
    "fetched_file_name": file_name,
    "raw": raw.decode(),
    "blame": [[r["commit"]["title"], r["lines"]] for r in blame],
    "binary": base64.b64encode(binary).decode(),
    "updated": updated,
    "after_delete": after_delete,
    "duplicate": duplicate,
}))

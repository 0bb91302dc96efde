"""Reads a repository through python-gitlab, as a GitLab user would. Prints one JSON line of findings."""
import base64
import io
import json
import sys
import tarfile
import zipfile

import gitlab

url, token, project_id, readme_sha, binary_sha = sys.argv[1:6]
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(int(project_id))

root = project.repository_tree()
nested = project.repository_tree(path="lib", ref="feature", recursive=True, all=True)
# Offset pagination, followed through the Link header.
offset_paths = [entry["path"] for entry in project.repository_tree(recursive=True, iterator=True, per_page=2)]
# Keyset pagination: only the Link header's page_token goes on.
keyset_paths = [
    entry["path"]
    for entry in project.repository_tree(recursive=True, iterator=True, pagination="keyset", per_page=2)
]

blob = project.repository_blob(readme_sha)
raw = project.repository_raw_blob(readme_sha)
raw_binary = project.repository_raw_blob(binary_sha)

default_archive = project.repository_archive()
with tarfile.open(fileobj=io.BytesIO(default_archive), mode="r:gz") as archive:
    tar_members = sorted(archive.getnames())
zip_archive = project.repository_archive(format="zip", sha="feature", path="lib")
with zipfile.ZipFile(io.BytesIO(zip_archive)) as archive:
    zip_members = sorted(archive.namelist())
bz2_archive = project.repository_archive(format="tar.bz2")
with tarfile.open(fileobj=io.BytesIO(bz2_archive), mode="r:bz2") as archive:
    bz2_members = sorted(archive.getnames())

compare = project.repository_compare("main", "feature")
straight = project.repository_compare("main", "feature", straight=True)
contributors = project.repository_contributors(all=True)
merge_base = project.repository_merge_base(["main", "feature"])

try:
    project.repository_blob("0" * 40)
    missing_blob = "no error"
except gitlab.exceptions.GitlabGetError as e:
    missing_blob = [e.response_code, e.error_message]

try:
    project.repository_merge_base(["main"])
    one_ref = "no error"
except gitlab.exceptions.GitlabGetError as e:
    one_ref = [e.response_code, e.error_message]

print(json.dumps({
    "root": [[entry["type"], entry["path"]] for entry in root],
    "nested": [entry["path"] for entry in nested],
    "offset_paths": offset_paths,
    "keyset_paths": keyset_paths,
    "blob_sha": blob["sha"],
    "blob_text": base64.b64decode(blob["content"]).decode("utf-8"),
    "raw": raw.decode("utf-8"),
    "raw_binary": list(raw_binary),
    "tar_members": tar_members,
    "zip_members": zip_members,
    "bz2_members": bz2_members,
    "compare_commits": [commit["id"] for commit in compare["commits"]],
    "compare_paths": sorted(diff["new_path"] for diff in compare["diffs"]),
    "straight_paths": sorted(diff["new_path"] for diff in straight["diffs"]),
    "contributors": [[c["email"], c["commits"]] for c in contributors],
    "merge_base": merge_base["id"],
    "missing_blob": missing_blob,
    "one_ref": one_ref,
}))

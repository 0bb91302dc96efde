"""Drives forge-api with python-gitlab, as a GitLab user would. Prints one JSON line of findings."""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
gl = gitlab.Gitlab(url, private_token=token)

created = gl.projects.create({"name": "Python Made", "description": "from python-gitlab", "issues_enabled": False})
fetched = gl.projects.get(created.id, statistics=True)
by_path = gl.projects.get(created.path_with_namespace)
for i in range(5):
    gl.projects.create({"name": f"py-extra-{i}"})

# Offset pagination, followed through the Link header.
offset_ids = [p.id for p in gl.projects.list(iterator=True, per_page=2, owned=True, order_by="id", sort="asc")]
# Keyset pagination.
keyset_ids = [
    p.id
    for p in gl.projects.list(iterator=True, pagination="keyset", order_by="id", sort="asc", per_page=2, owned=True)
]
page = gl.projects.list(iterator=True, per_page=2, page=2, owned=True)

try:
    gl.projects.get(999999)
    missing = "no error"
except gitlab.exceptions.GitlabGetError as e:
    missing = e.response_code

try:
    gl.projects.create({"visibility": "public"})
    invalid = "no error"
except gitlab.exceptions.GitlabCreateError as e:
    invalid = [e.response_code, e.error_message]

print(json.dumps({
    "created_name": created.name,
    "created_path": created.path,
    "issues_enabled": fetched.issues_enabled,
    "statistics": fetched.statistics.get("commit_count"),
    "by_path_id": by_path.id,
    "same_id": by_path.id == created.id,
    "offset_ids": offset_ids,
    "keyset_ids": keyset_ids,
    "current_page": page.current_page,
    "total": page.total,
    "total_pages": page.total_pages,
    "next_page": page.next_page,
    "missing": missing,
    "invalid": invalid,
}))

# Edit, archive, unarchive and delete, as python-gitlab's object methods do them.
editable = gl.projects.create({"name": "py-editable"})
editable.description = "edited by python-gitlab"
editable.merge_method = "ff"
editable.save()
reread = gl.projects.get(editable.id)
editable.archive()
archived = gl.projects.get(editable.id).archived
editable.unarchive()
unarchived = gl.projects.get(editable.id).archived
editable.delete()
try:
    gl.projects.get(editable.id)
    after_delete = "still there"
except gitlab.exceptions.GitlabGetError as e:
    after_delete = e.response_code
print(json.dumps({
    "description": reread.description,
    "merge_method": reread.merge_method,
    "archived": archived,
    "unarchived": unarchived,
    "after_delete": after_delete,
}))

# Custom attributes, as an administrator (third argument).
if len(sys.argv) > 3:
    admin = gitlab.Gitlab(url, private_token=sys.argv[3])
    project = admin.projects.get(created.id)
    project.customattributes.set("tier", "gold")
    filtered = admin.projects.list(custom_attributes={"tier": "gold"}, get_all=True)
    print(json.dumps({
        "custom_attribute": project.customattributes.get("tier").value,
        "custom_attributes": [(a.key, a.value) for a in project.customattributes.list()],
        "filtered_ids": [p.id for p in filtered],
        "created_id": created.id,
    }))
    project.customattributes.delete("tier")

"""Lists every page of projects, branches, tags and a tree from the Prism mock with python-gitlab. Prints one JSON line."""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(42, lazy=True)

every = gl.projects.list(get_all=True)
iterated = gl.projects.list(iterator=True)
walked = [p.path_with_namespace for p in iterated]

print(json.dumps({
    "projects": [p.path_with_namespace for p in every],
    "iterated": walked,
    "iterator_pages": [iterated.current_page, iterated.total_pages, iterated.next_page, iterated.total],
    "branches": [b.name for b in project.branches.list(get_all=True)],
    "tags": [t.name for t in project.tags.list(get_all=True)],
    "tree": [e["path"] for e in project.repository_tree(recursive=False, get_all=True)],
    "tree_iterated": [e["path"] for e in project.repository_tree(recursive=True, iterator=True)],
}))

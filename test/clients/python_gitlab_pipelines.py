"""Pipelines and jobs through python-gitlab 3.12: prints what the calls answered, as JSON."""
import json
import sys

import gitlab

url, token, project_id, pipeline_id, build_id, manual_id = sys.argv[1:7]
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(int(project_id), lazy=True)
out = {}

out["listed"] = [p.id for p in project.pipelines.list(get_all=True)]
pipeline = project.pipelines.get(int(pipeline_id))
out["pipeline"] = [pipeline.status, pipeline.detailed_status["group"], pipeline.source]
out["jobs"] = [j.name for j in pipeline.jobs.list(get_all=True)]
out["bridges"] = [[b.name, b.downstream_pipeline is not None] for b in pipeline.bridges.list(get_all=True)]

created = project.pipelines.create({"ref": "main", "variables": [{"key": "PY", "value": "yes"}]})
out["created"] = [created.source, created.ref]
out["variables"] = [[v.key, v.value, v.variable_type] for v in created.variables.list(get_all=True)]
created.cancel()
out["canceled"] = project.pipelines.get(created.id).status
created.retry()
out["retried"] = project.pipelines.get(created.id).status

build = project.jobs.get(int(build_id))
out["trace"] = build.trace().decode()
build.erase()
out["erased"] = project.jobs.get(int(build_id)).erased_at is not None
build.retry()
manual = project.jobs.get(int(manual_id))
manual.play()
out["played"] = project.jobs.get(int(manual_id)).status
pending = [j for j in project.jobs.list(get_all=True, scope=["pending"]) if j.name == "build"][0]
project.jobs.get(pending.id).cancel()
out["job_canceled"] = project.jobs.get(pending.id).status
print(json.dumps(out))

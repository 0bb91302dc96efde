"""Reads what the built-in runner's pipeline left, with python-gitlab, as a GitLab user would.

The pipeline's jobs and a job's trace, the pipeline's test report and its summary, and the environment a
job deployed to with its last deployment.

Arguments: server URL, a token, a project ID, a pipeline ID. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token, project_id, pipeline_id = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)
pipeline = project.pipelines.get(pipeline_id)
found = {}

jobs = pipeline.jobs.list(get_all=True)
found["jobs"] = sorted([j.name, j.status] for j in jobs)
build = project.jobs.get(next(j.id for j in jobs if j.name == "build"))
found["build_trace"] = "Job succeeded" in build.trace().decode()
found["build_artifacts"] = build.artifacts_file["filename"]

report = pipeline.test_report.get()
found["test_report"] = [report.total_count, report.success_count, [s["name"] for s in report.test_suites]]
summary = pipeline.test_report_summary.get()
found["test_report_summary"] = summary.total["count"]

env = project.environments.list(name="production")[0]
env = project.environments.get(env.id)
found["environment"] = [env.name, env.state, env.last_deployment["status"], env.last_deployment["deployable"]["name"]]

print(json.dumps(found))

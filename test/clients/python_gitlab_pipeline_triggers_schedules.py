"""Drives trigger tokens, triggering, pipeline schedules and their variables, and CI lint with python-gitlab 3.12.

Arguments: server URL, a Maintainer's token, the project ID (its `main` has a .gitlab-ci.yml). Prints one
JSON line of findings.
"""
import json
import sys

import gitlab

url, token, project_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(project_id)

# Trigger tokens, and a pipeline started with one (ProjectTriggerManager, Project.trigger_pipeline).
trigger = project.triggers.create({"description": "py-trigger"})
trigger.description = "py-trigger (main)"
trigger.save()
listed = [t.description for t in project.triggers.list(get_all=True)]
pipeline = project.trigger_pipeline("main", trigger.token, variables={"DEPLOY": "py"})
variables = {v.key: v.value for v in project.pipelines.get(pipeline.id).variables.list(get_all=True)}
last_used = project.triggers.get(trigger.id).last_used is not None
trigger.delete()
try:
    project.trigger_pipeline("main", trigger.token)
    deleted = None
except gitlab.exceptions.GitlabCreateError as err:
    deleted = err.response_code

# Pipeline schedules, their variables, ownership and play (ProjectPipelineScheduleManager).
schedule = project.pipelineschedules.create({"description": "py-nightly", "ref": "main", "cron": "0 1 * * *"})
var = schedule.variables.create({"key": "TARGET", "value": "nightly"})
var.value = "weekly"
var.save()
schedule.cron = "30 2 * * 1"
schedule.cron_timezone = "Europe/Paris"
schedule.save()
again = project.pipelineschedules.get(schedule.id)
schedule.take_ownership()
# play() replaces the object's attributes with the answer (`{"message": "201 Created"}`), as against GitLab.
played = schedule.play()
schedule = project.pipelineschedules.get(again.id)
var.delete()
after_delete = project.pipelineschedules.get(schedule.id).attributes.get("variables")
try:
    project.pipelineschedules.create({"description": "bad", "ref": "main", "cron": "nope"})
    bad_cron = None
except gitlab.exceptions.GitlabCreateError as err:
    bad_cron = [err.response_code, err.error_message]
schedules = [s.description for s in project.pipelineschedules.list(get_all=True)]
schedule.delete()

# CI lint, in the project and at the instance (ProjectCiLintManager, CiLintManager).
linted = project.ci_lint.create({"content": "build:\n  script: make\n", "include_jobs": True})
try:
    project.ci_lint.validate({"content": "build:\n  image: x\n"})
    invalid = None
except gitlab.exceptions.GitlabCiLintError as err:
    invalid = str(err)
own = project.ci_lint.get()
legacy = gl.ci_lint.create({"content": "build:\n  script: make\n", "include_merged_yaml": True})
try:
    gl.ci_lint.validate({"content": "build:\n  image: x\n"})
    legacy_invalid = None
except gitlab.exceptions.GitlabCiLintError as err:
    legacy_invalid = str(err)

print(
    json.dumps(
        {
            "trigger": [trigger.token.startswith("glptt-"), trigger.description],
            "listed": listed,
            "pipeline": [pipeline.source, pipeline.ref],
            "variables": sorted(variables),
            "last_used": last_used,
            "deleted": deleted,
            "schedule": [again.cron, again.cron_timezone, again.attributes["variables"]],
            "played": played,
            "after_delete": after_delete,
            "bad_cron": bad_cron,
            "schedules": schedules,
            "lint": [linted.valid, [j["name"] for j in linted.jobs]],
            "invalid": invalid,
            "own": own.valid,
            "legacy": [legacy.status, "make" in legacy.merged_yaml],
            "legacy_invalid": legacy_invalid,
        }
    )
)

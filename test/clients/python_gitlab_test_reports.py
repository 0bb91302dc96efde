"""Reads a pipeline's test report and its summary with python-gitlab, as a GitLab user would.

Arguments: server URL, a token, the project ID and the pipeline ID. Prints one JSON line of findings.
"""
import json
import sys

import gitlab

url, token = sys.argv[1], sys.argv[2]
project_id, pipeline_id = int(sys.argv[3]), int(sys.argv[4])
gl = gitlab.Gitlab(url, private_token=token)
pipeline = gl.projects.get(project_id, lazy=True).pipelines.get(pipeline_id)

report = pipeline.test_report.get()
summary = pipeline.test_report_summary.get()
print(
    json.dumps(
        {
            "total_count": report.total_count,
            "failed_count": report.failed_count,
            "suites": [s["name"] for s in report.test_suites],
            "cases": [c["name"] for s in report.test_suites for c in s["test_cases"]],
            "summary_total": summary.total["count"],
            "summary_suites": [[s["name"], s["total_count"]] for s in summary.test_suites],
        }
    )
)

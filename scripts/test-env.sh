#!/usr/bin/env bash
# Runs the given test command (vitest) against the machine's PostgreSQL when one answers, else embedded PGlite.
set -euo pipefail
if [ -z "${FORGE_TEST_DATABASE_URL+x}" ]; then
  url="postgres://postgres@127.0.0.1:5432/postgres"
  if node -e "
    const { Client } = require('pg');
    const c = new Client({ connectionString: '$url', connectionTimeoutMillis: 2000 });
    c.connect().then(() => c.end()).then(() => process.exit(0), () => process.exit(1));
  " 2>/dev/null; then
    export FORGE_TEST_DATABASE_URL="$url"
    echo "tests: PostgreSQL at 127.0.0.1:5432 (a database per test file, copied from a migrated template)"
  else
    export FORGE_TEST_DATABASE_URL=""
    echo "tests: no PostgreSQL answered; embedded PGlite (a database per test file, from a migrated dump)"
  fi
fi
mkdir -p .forge-test
export FORGE_OPS_LOG="${FORGE_OPS_LOG:-$PWD/.forge-test/operations.jsonl}"
: > "$FORGE_OPS_LOG"
status=0
started=$(date +%s)
"$@" || status=$?
# The json reporter's file (`--outputFile.json=…`, else the Makefile's): the ten slowest test files, so a slow
# file is seen the day it lands, then a plain closing line that any CI reads: "tests: N passed, N failed, N skipped".
report=.forge-test/vitest.json
for arg in "$@"; do
  case "$arg" in --outputFile.json=*) report=${arg#--outputFile.json=} ;; esac
done
# A report older than this run is another run's: say nothing of it.
if [ -f "$report" ] && [ "$(stat -c %Y "$report")" -ge "$started" ]; then
  REPORT="$report" node -e '
    const r = require(require("path").resolve(process.env.REPORT));
    const files = r.testResults
      .map((f) => ({ name: require("path").relative(process.cwd(), f.name), seconds: (f.endTime - f.startTime) / 1000 }))
      .sort((a, b) => b.seconds - a.seconds);
    console.log(`tests: the ten slowest of ${files.length} files (wall time)`);
    for (const f of files.slice(0, 10)) console.log(`${f.seconds.toFixed(1).padStart(8)} s  ${f.name}`);
    if (process.env.FORGE_TEST_RECORD_SECONDS === "1") {
      // What the sequencer (test/helpers/sequencer.ts) orders a fresh clone by.
      const seconds = Object.fromEntries(files.map((f) => [f.name, Math.round(f.seconds)]).sort());
      require("fs").writeFileSync("test/helpers/file-seconds.json", JSON.stringify(seconds, null, 2) + "\n");
    }
    console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
  '
fi
exit $status

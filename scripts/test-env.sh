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
"$@" || status=$?
# A plain closing line that any CI reads: "tests: N passed, N failed, N skipped".
if [ -f .forge-test/vitest.json ]; then
  node -e '
    const r = require("./.forge-test/vitest.json");
    console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
  '
fi
exit $status

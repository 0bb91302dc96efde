# forge-api: every task a developer, an operator or CI runs.
SHELL := /bin/bash
BIN := node_modules/.bin
SPEC := openapi/openapi.yaml
PORT ?= 8080
# Redocly sends usage data unless told not to; nothing leaves the machine.
export REDOCLY_TELEMETRY := off

.PHONY: install generate check-generated lint typecheck build migrate run runner test test-unit fuzz mock docs ops-coverage bench clean

# --prefer-offline: packages already in npm's cache are not checked with the registry again.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --prefer-offline --loglevel=error
	@touch $@

install: node_modules/.installed

## Contract: write the root spec from the family spec files, bundle it and generate the TypeScript types from it.
generate: install
	node scripts/root-spec.mjs
	$(BIN)/redocly bundle $(SPEC) --ext json -o generated/openapi.json >/dev/null
	$(BIN)/openapi-typescript generated/openapi.json -o generated/openapi.d.ts --root-types --alphabetize --default-non-nullable=false --redocly scripts/openapi-ts.redocly.yaml >/dev/null
	node scripts/operation-subjects.mjs generated/openapi.json generated/operation-subjects.d.ts
	node scripts/families-table.mjs generated/openapi.json README.md

check-generated: install
	@node scripts/root-spec.mjs --check
	@tmp=$$(mktemp -d); \
	$(BIN)/redocly bundle $(SPEC) --ext json -o $$tmp/openapi.json >/dev/null && \
	$(BIN)/openapi-typescript $$tmp/openapi.json -o $$tmp/openapi.d.ts --root-types --alphabetize --default-non-nullable=false --redocly scripts/openapi-ts.redocly.yaml >/dev/null && \
	node scripts/operation-subjects.mjs $$tmp/openapi.json $$tmp/operation-subjects.d.ts && \
	cmp -s $$tmp/openapi.json generated/openapi.json && cmp -s $$tmp/openapi.d.ts generated/openapi.d.ts \
	  && cmp -s $$tmp/operation-subjects.d.ts generated/operation-subjects.d.ts \
	  || { echo "generated/ is stale: run make generate and commit the result" >&2; rm -rf $$tmp; exit 1; }; \
	rm -rf $$tmp
	@node scripts/families-table.mjs generated/openapi.json README.md --check

lint: install check-generated
	$(BIN)/redocly lint $(SPEC) --format stylish
	$(BIN)/tsc --noEmit -p tsconfig.json
	$(BIN)/depcruise src --config .dependency-cruiser.cjs --output-type err
	node scripts/families-sorted.mjs src/families.ts
	node scripts/core-names-no-ability.mjs
	$(BIN)/eslint --max-warnings 0 .
	$(BIN)/prettier --check --log-level warn .

typecheck: install
	$(BIN)/tsc --noEmit -p tsconfig.json

# dist/ is compiled from these; directories are listed too, so a deleted or added file also counts.
DIST_SOURCES := $(shell find src generated) .swcrc package-lock.json
# swc compiles with about 1 s of CPU where tsc took 11 s; it does not type-check (make lint runs tsc); .swcrc
# keeps tsc's output: ES modules, dist/src/ layout, decorator metadata for TypeORM, source maps.
# dist/REVISION records the commit built from (GET /metadata reports it); without git there is none.
COMPILE = rm -rf dist && $(BIN)/swc src -d dist --quiet --extensions .ts --ignore '**/*.d.ts' && \
	{ git rev-parse --short=11 HEAD > dist/REVISION 2>/dev/null || rm -f dist/REVISION; } && touch dist/.built

# `make build` always compiles; run and migrate compile only when a source is newer than the last build.
build: install
	$(COMPILE)

dist/.built: node_modules/.installed $(DIST_SOURCES)
	$(COMPILE)

## Run on the embedded database (or DATABASE_URL when set).
migrate: dist/.built
	node dist/src/cli/setup.js

# The server migrates and makes sure root exists itself: one start, not two.
# FORGE_BUILTIN_RUNNER=true also starts the built-in shell runner beside it (it registers itself as an
# instance runner with the root token once the server answers, and stops with the server).
run: dist/.built
ifeq ($(FORGE_BUILTIN_RUNNER),true)
	@node dist/src/runner/main.js --register & runner=$$!; \
	trap 'kill $$runner 2>/dev/null; wait $$runner 2>/dev/null' EXIT; \
	node dist/src/main.js
else
	node dist/src/main.js
endif

## The built-in shell runner alone, against FORGE_RUNNER_URL with FORGE_RUNNER_TOKEN (see the README).
runner: dist/.built
	node dist/src/runner/main.js

test: build
	@rm -f .forge-test/vitest.json
	@bash scripts/test-env.sh $(BIN)/vitest run --reporter=default --reporter=json --outputFile.json=.forge-test/vitest.json $(VITEST_ARGS)

## Every operation of the contract, broken in every way, 30,000+ requests (FUZZ_SEED=n repeats a run's requests).
fuzz: build
	@rm -f .forge-test/fuzz-full-* .forge-test/vitest.json
	@status=0; FORGE_FUZZ=full FORGE_OPS_LOG=$(CURDIR)/.forge-test/fuzz-operations.jsonl \
	  bash scripts/test-env.sh $(BIN)/vitest run test/fuzz/ || status=$$?; \
	cat .forge-test/fuzz-full-findings.txt .forge-test/fuzz-full-summary.txt 2>/dev/null; exit $$status

## Prism serving the contract on MOCK_PORT; prints the mock's URL once Prism listens.
MOCK_PORT ?= 4010
MOCK_SPEC ?= .forge-test/mock-openapi.json
mock: install
	@node --import tsx scripts/mock-spec.ts generated/openapi.json $(MOCK_SPEC) http://127.0.0.1:$(MOCK_PORT) >/dev/null
	@set -o pipefail; $(BIN)/prism mock $(MOCK_SPEC) --port $(MOCK_PORT) --host 127.0.0.1 2>&1 | awk \
	  -v url=http://127.0.0.1:$(MOCK_PORT)/api/v4 '{ print; fflush() } /is listening on/ { print "mock: " url; fflush() }'

docs: install
	@bash scripts/build-docs.sh docs/api.html

ops-coverage: install
	@node --import tsx scripts/ops-coverage.ts

## A few minutes: seeds a fresh server and prints each endpoint beside its floor (never fails on a number).
bench: build
	@node --import tsx scripts/bench/bench.ts
	@node --import tsx scripts/bench/ci-lint-config.ts
	@node --import tsx scripts/bench/object-store.ts
	@node --import tsx scripts/bench/runner.ts
	@node --import tsx scripts/bench/artifacts.ts

clean:
	rm -rf dist data .forge-test

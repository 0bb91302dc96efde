/**
 * Import rules `make lint` enforces (dependency-cruiser): no cycles, type-only ones included; core and git
 * name no family, git runs only inside src/git/, and only the composition root reaches the list of families.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Modules may not import each other in a circle, type-only imports included: they hide the graph. ' +
        'TypeORM entities that reference each other (relations both ways) are the one allowed exception: ' +
        'a circle made of nothing but one listed pair.',
      from: {},
      to: {
        circular: true,
        // Reported unless every module of the circle is one of the entities listed here.
        via: {
          pathNot: [
            // Project <-> ProjectStatistics.
            '^src/projects/(project|project-statistics)\\.entity\\.ts$',
          ],
        },
      },
    },
    {
      name: 'core-imports-no-family',
      severity: 'error',
      comment: 'src/core/ holds the shared mechanisms; families plug into it, never the other way round.',
      from: { path: '^src/core/' },
      to: {
        path: '^src/',
        pathNot: ['^src/core/', '^src/db/', '^src/config\\.ts$', '^src/logger\\.ts$'],
      },
    },
    {
      name: 'git-imports-no-family',
      severity: 'error',
      comment:
        'src/git/ is git mechanics: families call it and extend pushes through its hook points (pre-receive.ts), ' +
        'never the other way round.',
      from: { path: '^src/git/' },
      to: {
        path: '^src/',
        pathNot: ['^src/git/', '^src/core/', '^src/db/', '^src/config\\.ts$', '^src/logger\\.ts$'],
      },
    },
    {
      name: 'git-only-in-src-git',
      severity: 'error',
      comment:
        'Every git (and other) process is spawned by src/git/, the one git layer. src/runner/ is the ' +
        'exception: the built-in runner executes jobs (bash, git clone as a CI client), it is not the server.',
      from: {
        path: '^src/',
        pathNot: [
          '^src/git/',
          // The runner is a separate command, a client of the runner API that runs jobs' scripts.
          '^src/runner/',
        ],
      },
      to: { path: ['^child_process$', '^node:child_process$', '^src/git/git\\.ts$'] },
    },
    {
      name: 'ci-config-is-pure',
      severity: 'error',
      comment:
        'src/ci_config/ is the .gitlab-ci.yml language: YAML in, a plan or errors out. Files, URLs and the ' +
        'repository come in through its IncludeSources and RuleContext; it imports no other folder of src/, ' +
        'no database, web, filesystem or network module.',
      from: { path: '^src/ci_config/' },
      to: {
        path: [
          '^src/(?!ci_config/)',
          '^(node:)?(fs|fs/promises|child_process|net|http|https|http2|dns|tls|worker_threads)$',
          'node_modules/(typeorm|koa|@koa|pg|pg-boss|@electric-sql)/',
        ],
      },
    },
    {
      name: 'only-the-root-sees-the-registry',
      severity: 'error',
      comment:
        'Services name the services they use; only the composition root reads the list of families: ' +
        'the app, and the entry points that hand the data source its entities and migrations ' +
        '(the server, the setup command, the thread that makes the PGlite template).',
      from: {
        path: '^src/',
        pathNot: ['^src/(app|main)\\.ts$', '^src/cli/', '^src/db/pglite-template-worker\\.ts$'],
      },
      to: { path: '^src/families\\.ts$' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^node_modules', '^dist', '^generated'] },
    moduleSystems: ['es6'],
    builtInModules: { add: [] },
  },
};

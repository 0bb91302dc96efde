/** Whatever the text, loadConfig answers (errors or a configuration) and never throws. */
import { describe, expect, it } from 'vitest';
import { loadConfig, planPipeline } from '../../../src/ci_config/index.js';
import { fakeContext, fakeSources } from './fake.js';

const INPUTS: Array<[string, string[] | null]> = [
  ['', ['Please provide content of .gitlab-ci.yml']],
  ['just a string', ['Invalid configuration format']],
  ['- a\n- b\n', ['Invalid configuration format']],
  ['job:\n', ['jobs job config should implement the script:, run:, or trigger: keyword']],
  ['job: [unclosed', null],
  ['job:\n  script: !reference scalar\n', null],
  ['job:\n  script: !reference []\n', null],
  ['a: &a [*a]\n', null],
  ['job:\n  script: echo\n  rules: "not a list"\n', ['jobs:job:rules config should be an array of hashes']],
  ['job:\n  script: echo\n  rules:\n    - 42\n', ['jobs:job:rules:rule config should be a hash']],
  [
    'job:\n  script: {a: b}\n',
    ['jobs:job:script config should be a string or a nested array of strings up to 10 levels deep'],
  ],
  ['job:\n  script: echo\n  needs: "build"\n', ['jobs:job:needs config can only be a hash or an array']],
  ['job:\n  script: echo\n  extends: 42\n', null],
  ['job:\n  script: echo\n  parallel: "x"\n', ['jobs:job:parallel config should be an integer or a hash']],
  [
    'job:\n  script: echo\n  variables: [a]\n',
    ['jobs:job:variables config should be a hash of key value pairs, value can be a hash'],
  ],
  ['stages: build\njob:\n  script: echo\n', ['stages config should be an array of strings']],
  ['include: 42\n', null],
  ['include:\n  - local: a.yml\n    remote: https://x/y.yml\n', null],
  [
    'include:\n  - local: a.txt\njob:\n  script: echo\n',
    ['Included file `a.txt` does not have YAML extension!'],
  ],
  [
    'include:\n  - template: Nodejs.yml\njob:\n  script: echo\n',
    ['Template file `Nodejs.yml` is not a valid location!'],
  ],
  ['workflow: []\njob:\n  script: echo\n', ['workflow config should be a hash']],
  [
    'workflow:\n  rules:\n    - when: manual\njob:\n  script: echo\n',
    ['workflow:rules:rule when unknown value: manual'],
  ],
  ['default:\n  imagee: x\njob:\n  script: echo\n', ['default config contains unknown keys: imagee']],
  ['job:\n  trigger: {}\n', ['jobs:job:trigger config must specify either project or include']],
  [
    'job:\n  trigger:\n    project: a/b\n    strategy: wait\n',
    ['jobs:job:trigger strategy should be depend'],
  ],
  [
    'job:\n  script: echo\n  allow_failure: "yes"\n',
    ['jobs:job allow failure should be a hash or a boolean value'],
  ],
  ['job:\n  script: echo\n  timeout: forever\n', ['jobs:job timeout should be a duration']],
  ['job:\n  script: echo\n  image: {entrypoint: [""]}\n', ["jobs:job:image name can't be blank"]],
  ['job:\n  script: echo\n  dependencies: build\n', ['jobs:job dependencies should be an array of strings']],
  [
    'job:\n  script: echo\n  needs: [build]\n  dependencies: [other]\nbuild:\n  stage: build\n  script: b\nother:\n  stage: build\n  script: o\n',
    ['jobs:job dependencies the other should be part of needs'],
  ],
  [
    'job:\n  script: echo\n  dependencies: [later]\nlater:\n  stage: deploy\n  script: x\n',
    ['job job: dependency later is not defined in current or prior stages'],
  ],
  ['.a:\n  extends: .b\n.b:\n  script: x\nj:\n  extends: 42\n  script: x\n', null],
  ['job:\n  script: echo\n  when: delayed\n  start_in: soon\n', ['jobs:job start in should be a duration']],
  [
    'job:\n  script: echo\n  rules:\n    - when: delayed\n',
    ['jobs:job:rules:rule start in should be a duration'],
  ],
  [
    'job:\n  script: echo\n  coverage: "no slashes"\n',
    ['jobs:job:coverage config must be a regular expression'],
  ],
  [
    'job:\n  script: echo\n  only:\n    refs: ["/[/"]\n',
    ['jobs:job:only:refs config should be an array of strings or regular expressions using re2 syntax'],
  ],
  [
    'job:\n  script: echo\n  artifacts:\n    pathz: [a]\n',
    ['jobs:job:artifacts config contains unknown keys: pathz'],
  ],
  [
    'job:\n  script: echo\n  artifacts:\n    when: sometimes\n',
    ['jobs:job:artifacts when should be on_success, on_failure or always'],
  ],
  [
    'job:\n  script: echo\n  cache: [{}, {}, {}, {}, {}]\n',
    ['jobs:job:cache config no more than 4 caches can be created'],
  ],
  [
    'default:\n  cache:\n    keys: x\njob:\n  script: echo\n',
    ['default:cache config contains unknown keys: keys'],
  ],
];

describe('loadConfig on broken input', () => {
  it.each(INPUTS)('%j', async (content, errors) => {
    const config = await loadConfig({ content, sources: fakeSources(), projectPath: 'g/p', sha: 'abc' });
    expect(config.errors.length).toBeGreaterThan(0);
    if (errors) expect(config.errors).toEqual(errors);
    const plan = await planPipeline(config, fakeContext());
    expect(plan).toMatchObject({ ok: false, skipped: false });
  });

  it('a deep chain of extends stops at GitLab limit', async () => {
    const chain =
      Array.from({ length: 13 }, (_, i) => `.t${i}:\n  extends: .t${i + 1}\n`).join('') +
      '.t13:\n  script: x\njob:\n  extends: .t0\n';
    const config = await loadConfig({
      content: chain,
      sources: fakeSources(),
      projectPath: 'g/p',
      sha: 'abc',
    });
    expect(config.errors).toEqual(['.t11: nesting too deep in `extends`']);
    const ok =
      Array.from({ length: 9 }, (_, i) => `.t${i}:\n  extends: .t${i + 1}\n`).join('') +
      '.t9:\n  script: x\njob:\n  extends: .t0\n';
    expect(
      (await loadConfig({ content: ok, sources: fakeSources(), projectPath: 'g/p', sha: 'abc' })).errors,
    ).toEqual([]);
  });

  it('a !reference loop is reported, not followed forever', async () => {
    const config = await loadConfig({
      content:
        '.a:\n  script: !reference [.b, script]\n.b:\n  script: !reference [.a, script]\njob:\n  script: !reference [.a, script]\n',
      sources: fakeSources(),
      projectPath: 'g/p',
      sha: 'abc',
    });
    expect(config.errors[0]).toMatch(/is part of a circular chain$/);
  });
});

describe('cache', () => {
  it('is a list with GitLab defaults, from the job or from default:', async () => {
    const config = await loadConfig({
      content:
        'default:\n  cache:\n    paths: [vendor/]\na:\n  script: echo\nb:\n  script: echo\n  cache:\n    - key: one\n      policy: pull\n',
      sources: fakeSources(),
      projectPath: 'g/p',
      sha: 'abc',
    });
    expect(config.errors).toEqual([]);
    const [a, b] = config.jobs;
    expect(a?.options.cache).toEqual([
      { key: 'default', untracked: false, when: 'on_success', policy: 'pull-push', paths: ['vendor/'] },
    ]);
    expect(b?.options.cache).toEqual([
      { key: 'one', untracked: false, when: 'on_success', policy: 'pull', paths: [] },
    ]);
  });
});

/** `spec:inputs` and `$[[ ... ]]` interpolation, table-driven, with GitLab's messages. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/ci_config/index.js';
import { fakeSources } from './fake.js';

const HEADER = `spec:
  inputs:
    env:
      default: staging
    count:
      type: number
      default: 2
    flag:
      type: boolean
      default: true
    list:
      type: array
      default: [a, b]
    name:
      regex: ^[a-z]+$
      default: abc
---
`;

async function script(body: string, inputs: Record<string, unknown> = {}) {
  const config = await loadConfig({
    content: `${HEADER}job:\n  script:\n    - ${body}\n`,
    sources: fakeSources(),
    projectPath: 'g/p',
    sha: 'abc',
    inputs,
    variables: { HOST: 'example.org' },
  });
  return config.errors.length > 0 ? config.errors : config.jobs[0]?.options.script;
}

describe('interpolation', () => {
  it.each([
    ['echo $[[ inputs.env ]]', {}, ['echo staging']],
    ['echo $[[inputs.env]]-$[[ inputs.count ]]', { env: 'prod' }, ['echo prod-2']],
    ['echo $[[ inputs.flag ]] $[[ inputs.list ]]', {}, ['echo true ["a","b"]']],
    ['echo $[[ inputs.count ]]', { count: '7' }, ['echo 7']],
    ['echo $[[ inputs.env | truncate(0, 4) ]]', {}, ['echo stag']],
    ['echo $[[ inputs.env | expand_vars ]]', { env: '$HOST/x' }, ['echo example.org/x']],
    ['echo $[[ matrix.OS ]]', {}, ['echo $[[ matrix.OS ]]']],
    ['echo $[[ inputs.missing ]]', {}, ['unknown interpolation key: `missing`']],
    ['echo $[[ env ]]', {}, ['invalid interpolation access pattern']],
    ['echo $[[ other.env ]]', {}, ['unknown interpolation key: `other`']],
    [
      'echo $[[ inputs.env | expand_vars | expand_vars | expand_vars | expand_vars ]]',
      {},
      ['too many functions in interpolation block'],
    ],
    [
      'echo $[[ inputs.env | shout ]]',
      {},
      ['no function matching `shout`: check that the function name, arguments, and types are correct'],
    ],
    ['echo', { count: 'many' }, ['`count` input: provided value is not a number']],
    ['echo', { flag: 'maybe' }, ['`flag` input: provided value is not a boolean']],
    ['echo', { list: 'a' }, ['`list` input: provided value is not a array']],
    ['echo', { name: 'ABC' }, ['`name` input: provided value does not match required RegEx pattern']],
    ['echo', { nope: 1, other: 2 }, ['unknown input arguments: nope, other']],
  ])('%s with %j', async (body, inputs, want) => {
    expect(await script(body, inputs)).toEqual(want);
  });

  it('reports a default of the wrong type', async () => {
    const config = await loadConfig({
      content: 'spec:\n  inputs:\n    n:\n      type: number\n      default: x\n---\njob:\n  script: echo\n',
      sources: fakeSources(),
      projectPath: 'g/p',
      sha: 'abc',
    });
    expect(config.errors).toEqual(['`n` input: default value is not a number']);
  });

  it('names the included file whose inputs are wrong, and refuses inputs to a file without spec', async () => {
    const files = {
      'scan.yml': 'spec:\n  inputs:\n    website:\n---\nscan:\n  script: scan $[[ inputs.website ]]\n',
      'plain.yml': 'plain:\n  script: echo\n',
    };
    const load = (content: string) =>
      loadConfig({ content, sources: fakeSources({ local: files }), projectPath: 'g/p', sha: 'abc' });
    expect((await load('include: scan.yml\n')).errors).toEqual([
      '`scan.yml`: `website` input: required value has not been provided',
    ]);
    expect((await load('include:\n  - local: plain.yml\n    inputs:\n      a: b\n')).errors).toEqual([
      '`plain.yml`: Given inputs not defined in the `spec` section of the included configuration file',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { coerce, parseBoolean, parseBracketPairs, queryPairs } from '../../src/core/params.js';
import { validationMessage } from '../../src/core/api.js';

describe('bracket notation', () => {
  it.each([
    ['plain', 'a=1&b=2', { a: '1', b: '2' }],
    ['array', 'refs[]=a&refs[]=b', { refs: ['a', 'b'] }],
    ['hash', 'position[base_sha]=x&position[head_sha]=y', { position: { base_sha: 'x', head_sha: 'y' } }],
    [
      'variables hash',
      'variables[KEY]=value&variables[OTHER]=2',
      { variables: { KEY: 'value', OTHER: '2' } },
    ],
    [
      'array of hashes',
      'allowed_to_push[][user_id]=5&allowed_to_push[][access_level]=40',
      {
        allowed_to_push: [{ user_id: '5', access_level: '40' }],
      },
    ],
    ['repeated key starts a new hash', 'a[][x]=1&a[][x]=2', { a: [{ x: '1' }, { x: '2' }] }],
    ['not[labels]', 'not[labels]=bug', { not: { labels: 'bug' } }],
    ['plus as space', 'search=foo+bar', { search: 'foo bar' }],
    ['encoded slash', 'id=group%2Fproject', { id: 'group/project' }],
    ['prototype keys are dropped', '__proto__[x]=1&constructor=2', {}],
  ])('%s', (_name, query, expected) => {
    expect(parseBracketPairs(queryPairs(query))).toEqual(expected);
  });
});

describe('booleans', () => {
  it.each([
    ['true', true],
    ['True', true],
    ['1', true],
    ['t', true],
    ['yes', true],
    ['on', true],
    ['false', false],
    ['False', false],
    ['0', false],
    ['f', false],
    ['no', false],
    ['off', false],
    ['maybe', undefined],
    ['', undefined],
  ])('%s', (text, expected) => {
    expect(parseBoolean(text)).toBe(expected);
  });
});

describe('coercion by schema', () => {
  const id = { anyOf: [{ type: 'integer' }, { type: 'string' }] };
  it.each([
    ['boolean from True', 'True', { type: 'boolean' }, true],
    ['boolean from 0', '0', { type: 'boolean' }, false],
    ['boolean from JSON 1', 1, { type: 'boolean' }, true],
    ['integer from digits', '42', { type: 'integer' }, 42],
    ['negative integer', '-3', { type: 'integer' }, -3],
    // NaN fails validation: Grape reads none of these as an integer.
    ['unconvertible integer is NaN', 'abc', { type: 'integer' }, NaN],
    ['exponent is no integer', '1e3', { type: 'integer' }, NaN],
    ['hex is no integer', '0x10', { type: 'integer' }, NaN],
    ['blank is no integer', ' ', { type: 'integer' }, NaN],
    ['empty stays empty', '', { type: 'integer' }, ''],
    ['string stays string', '42', { type: 'string' }, '42'],
    ['integer-or-string id stays a string', '42', id, '42'],
    ['single value for an array', 'a', { type: 'array', items: { type: 'string' } }, ['a']],
    ['array items coerced', ['1', '2'], { type: 'array', items: { type: 'integer' } }, [1, 2]],
    ['indexed object to array', { 1: 'b', 0: 'a' }, { type: 'array', items: { type: 'string' } }, ['a', 'b']],
    ['nullable empty', '', { type: ['integer', 'null'] }, null],
    ['number to string', 5, { type: 'string' }, '5'],
    [
      'nested object',
      { user_id: '5', force: 'true' },
      { type: 'object', properties: { user_id: { type: 'integer' }, force: { type: 'boolean' } } },
      { user_id: 5, force: true },
    ],
    [
      'through allOf',
      { count: '3' },
      { allOf: [{ type: 'object', properties: { count: { type: 'integer' } } }] },
      { count: 3 },
    ],
  ])('%s', (_name, value, schema, expected) => {
    expect(coerce(value, schema as Record<string, unknown>)).toEqual(expected);
  });
});

describe('validation messages', () => {
  it.each([
    [
      'missing',
      [{ keyword: 'required', instancePath: '/requestBody', params: { missingProperty: 'name' } }],
      'name is missing',
    ],
    [
      'enum',
      [{ keyword: 'enum', instancePath: '/query/visibility', params: {} }],
      'visibility does not have a valid value',
    ],
    ['type', [{ keyword: 'type', instancePath: '/query/page', params: {} }], 'page is invalid'],
    [
      'nested',
      [{ keyword: 'type', instancePath: '/requestBody/a/0/user_id', params: {} }],
      'a[0][user_id] is invalid',
    ],
    [
      'an array item, named by its parameter',
      [{ keyword: 'enum', instancePath: '/requestBody/scopes/1', params: {} }],
      'scopes does not have a valid value',
    ],
    [
      'several, each named once',
      [
        { keyword: 'type', instancePath: '/query/page', params: {} },
        { keyword: 'minimum', instancePath: '/query/page', params: {} },
        { keyword: 'enum', instancePath: '/query/sort', params: {} },
      ],
      'page is invalid, sort does not have a valid value',
    ],
  ])('%s', (_name, errors, expected) => {
    expect(validationMessage(errors)).toBe(expected);
  });
});

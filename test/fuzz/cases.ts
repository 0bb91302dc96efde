/**
 * The requests the fuzzer sends for one operation of the contract: a valid baseline built from real
 * data, then that baseline with one thing broken at a time (a parameter, the body, the URL, the
 * credentials), and in the full run random mixes of several.
 */
import zlib from 'node:zlib';
import { gemoji } from 'gemoji';
import { schemaTypes, type FuzzOperation, type Schema } from './contract.js';
import type { Fixture } from './fixtures.js';
import {
  INTEGER_EDGES,
  ENCODING,
  ESCAPE,
  FAR_PAGES,
  HUGE,
  MEGABYTE,
  RANGE,
  TRAVERSAL,
  jsonValue,
  nearMisses,
  nestingValues,
  optionValues,
  percent,
  unpercent,
  urlValue,
  valuePairs,
  wrongTypes,
  type Category,
  type FuzzValue,
  type Random,
} from './values.js';

/** Who a case is sent as; the token is added when it is sent, since rotations change tokens. */
export type Auth = 'admin' | 'member' | 'anonymous' | 'self' | 'custom';

export interface FuzzCase {
  operationId: string;
  category: Category;
  label: string;
  method: string;
  /** From `/api/v4`, percent-encoded as sent. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  auth: Auth;
  fixture: Fixture;
  /** A raw path may reach another route: a status any operation declares is fine then. */
  anyRoute?: boolean;
  /** A parameter holds NUL, a lone surrogate or invalid UTF-8: 2xx is a finding. */
  mustRefuse?: boolean;
}

type BodyType = 'json' | 'form' | 'multipart';

interface Plan {
  path: Map<string, string>;
  query: Array<[string, string]>;
  body?: Map<string, FuzzValue>;
  bodyType: BodyType;
  headers: Record<string, string>;
  auth: Auth;
}

const BOUNDARY = 'fuzzboundary7MA4YWxkTrZu0gW';
const CONTENT_TYPES: Record<BodyType, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: `multipart/form-data; boundary=${BOUNDARY}`,
};
const MEDIA: Record<BodyType, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
};

/** A plain value as a parameter: its JSON, and Rack's bracket pairs for query and form. */
export function plainValue(value: unknown): FuzzValue {
  const pairs = (name: string, v: unknown, out: Array<[string, string]>) => {
    if (Array.isArray(v)) {
      for (const item of v)
        if (typeof item === 'object' && item !== null)
          for (const [key, child] of Object.entries(item)) pairs(`${name}[][${key}]`, child, out);
        else out.push([`${name}[]`, percent(String(item))]);
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, child] of Object.entries(v)) pairs(`${name}[${key}]`, child, out);
    } else out.push([name, v === null ? '' : percent(String(v))]);
    return out;
  };
  return {
    label: JSON.stringify(value),
    category: 'valid',
    json: Buffer.from(JSON.stringify(value)),
    pairs: (name) =>
      pairs(percent(name), value, []).map(([n, v]) => [n.replace(/%5B/g, '[').replace(/%5D/g, ']'), v]),
  };
}

/** The collection a path starts with: `/projects/{id}/...` is about a project. */
const collection = (path: string) => path.split('/')[1];

/** Real values for path parameters, by name and by the collection they are under. */
function pathValue(op: FuzzOperation, name: string, fixture: Fixture): string {
  const under = collection(op.path);
  switch (name) {
    case 'id':
      if (under === 'projects') return String(fixture.project.id);
      if (under === 'groups') return String(fixture.group.id);
      if (under === 'users') return String(fixture.member.id);
      // Tokens named by id are spares: the ones callers authenticate with stay usable.
      if (under === 'personal_access_tokens') return String(fixture.spareTokens.personal);
      if (under === 'snippets')
        return String(op.method === 'DELETE' ? fixture.snippets.doomedPersonal : fixture.snippets.personal);
      break;
    case 'snippet_id':
      return String(op.method === 'DELETE' ? fixture.snippets.doomedProject : fixture.snippets.project);
    case 'user_id':
      return String(fixture.member.id);
    case 'sha':
      return op.path.includes('/blobs/') ? fixture.project.readmeSha : fixture.project.commitSha;
    case 'branch':
      return op.method === 'DELETE' ? fixture.doomedBranch : fixture.branch;
    case 'file_path':
      return op.method === 'POST' ? 'fuzz/new file.txt' : 'README.md';
    case 'tag_name':
      return fixture.tag;
    case 'name':
      return op.path.includes('protected_tags') ? fixture.protectedTag : fixture.protectedBranch;
    case 'key':
      return fixture.customAttribute;
    case 'token_id':
      if (op.path.includes('/cluster_agents/')) return String(fixture.agents.tokenId);
      return String(under === 'groups' ? fixture.spareTokens.group : fixture.spareTokens.project);
    case 'agent_id':
      // Deleting an agent takes the doomed one; revoking its token leaves the agent.
      return String(
        op.method === 'DELETE' && op.path.endsWith('{agent_id}')
          ? fixture.agents.doomedId
          : fixture.agents.id,
      );
    case 'iid':
      return String(
        op.method === 'DELETE' ? fixture.featureFlags.doomedListIid : fixture.featureFlags.listIid,
      );
    case 'feature_flag_name':
      return fixture.featureFlags.flag;
    case 'project_id':
      return String(fixture.project.id);
    case 'group_id':
      return String(fixture.sharedGroup.id);
    case 'label_id':
      if (op.path.endsWith('/promote')) return fixture.promotedLabel;
      return op.method === 'DELETE' ? fixture.doomedLabel : fixture.label;
    case 'milestone_id': {
      const { milestones } = fixture;
      if (under === 'groups')
        return String(op.method === 'DELETE' ? milestones.doomedGroup : milestones.group);
      return String(op.method === 'DELETE' ? milestones.doomedProject : milestones.project);
    }
    case 'merge_request_iid':
      // Deleting a note or a reaction leaves its merge request; only deleteMergeRequest takes the doomed one.
      return String(
        op.method === 'DELETE' && op.path.endsWith('{merge_request_iid}')
          ? fixture.mergeRequest.doomedIid
          : fixture.mergeRequest.iid,
      );
    case 'discussion_id':
      return fixture.notes.discussionId;
    case 'note_id': {
      const inThread = op.path.includes('/discussions/');
      // Deleting a note's reaction leaves the note.
      if (op.method === 'DELETE' && op.path.endsWith('{note_id}'))
        return String(inThread ? fixture.notes.doomedThreadNoteId : fixture.notes.doomedNoteId);
      return String(inThread ? fixture.notes.threadNoteId : fixture.notes.noteId);
    }
    case 'version_id':
      return String(fixture.mergeRequest.versionId);
    case 'resource_label_event_id':
      return String(fixture.resourceEvents.label);
    case 'resource_milestone_event_id':
      return String(fixture.resourceEvents.milestone);
    case 'resource_state_event_id':
      return String(fixture.resourceEvents.state);
    case 'mirror_id':
      return String(op.method === 'DELETE' ? fixture.remoteMirrors.doomed : fixture.remoteMirrors.mirror);
    case 'approval_rule_id': {
      const onMergeRequest = op.path.includes('/merge_requests/');
      const { approvalRules } = fixture;
      if (op.method === 'DELETE')
        return String(onMergeRequest ? approvalRules.doomedMergeRequest : approvalRules.doomedProject);
      return String(onMergeRequest ? approvalRules.mergeRequest : approvalRules.project);
    }
    case 'draft_note_id':
      if (op.method === 'DELETE') return String(fixture.draftNotes.doomedDraftId);
      if (op.path.endsWith('/publish')) return String(fixture.draftNotes.publishedDraftId);
      return String(fixture.draftNotes.draftId);
    case 'member_role_id':
      return String(under === 'groups' ? fixture.memberRoles.group : fixture.memberRoles.instance);
    case 'award_id': {
      const onNote = op.path.includes('/notes/');
      if (op.method === 'DELETE')
        return String(onNote ? fixture.awards.doomedNote : fixture.awards.doomedMergeRequest);
      return String(onNote ? fixture.awards.note : fixture.awards.mergeRequest);
    }
  }
  const param = op.params.find((p) => p.in === 'path' && p.name === name);
  return String(param?.example ?? (param?.schema.enum as unknown[] | undefined)?.[0] ?? 'x');
}

/** Values from real data for parameters whose examples name records that do not exist here. */
function knownValue(op: FuzzOperation, name: string, fixture: Fixture, serial: number): unknown {
  // Adding a member or a share needs someone not yet added.
  const adds = op.method === 'POST';
  switch (name) {
    case 'ref':
    case 'from':
    case 'start_branch':
    case 'ref_name':
      return 'main';
    case 'to':
      return fixture.branch;
    case 'refs':
      return ['main', fixture.branch];
    case 'user_id':
      return adds ? fixture.outsider.id : fixture.member.id;
    case 'group_id':
      return adds ? fixture.otherGroup.id : fixture.sharedGroup.id;
    case 'namespace_id':
      return fixture.group.id;
    case 'start_sha':
      return fixture.project.commitSha;
    case 'source_branch':
      return fixture.branch;
    case 'target_branch':
      return 'main';
    case 'target_project_id':
      return fixture.project.id;
    case 'start_project':
      return fixture.project.id;
    case 'tag_name':
      return `fuzz-${serial}`;
    case 'branch':
      // Only creating a branch names a new one; commits and files go to an existing one.
      return /\/branches$/.test(op.path) ? `fuzz-${serial}` : fixture.branch;
    case 'last_commit_id':
      return fixture.project.commitSha;
    case 'actions':
      return [{ action: 'create', file_path: `fuzz/${serial}.txt`, content: 'fuzz' }];
    case 'expires_at':
      return new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
    case 'visibility':
      return 'private';
    case 'username':
      return `fuzz-${serial}`;
    case 'email':
      return `fuzz-${serial}@example.com`;
    // The older label update names the label in its body; renaming it to itself keeps it for the rest.
    case 'name':
      // A reaction needs a real emoji name; a new one each time, so the valid award is not a repeat.
      if (/\/award_emoji$/.test(op.path)) return gemoji[serial % gemoji.length].names[0];
      return op.method === 'PUT' && /\/labels$/.test(op.path) ? fixture.label : undefined;
    case 'new_name':
      return fixture.label;
  }
  return undefined;
}

function exampleOf(schema: Schema): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const types = schemaTypes(schema);
  if (types.has('integer') || types.has('number')) return 1;
  if (types.has('boolean')) return true;
  if (types.has('array')) return [];
  if (types.has('object')) return {};
  return 'fuzz';
}

export interface GeneratorOptions {
  random: Random;
  /** A file an option injection (`--output=`) would create. */
  marker: string;
}

export interface CaseSpec {
  category: Category;
  label: string;
  /** Builds the request when it is sent: bodies of hundreds of kilobytes are not kept in advance. */
  make: () => FuzzCase;
}

export interface OperationCases {
  specs: CaseSpec[];
  /** `count` random mixes of several broken parameters (the full run has room for them). */
  mixes: (count: number) => CaseSpec[];
}

/** Every case for one operation, sent against `fixture`. */
export function operationCases(
  op: FuzzOperation,
  fixture: Fixture,
  options: GeneratorOptions,
): OperationCases {
  const { random } = options;
  const specs: CaseSpec[] = [];
  let serial = random.int(1e9);
  const selfAuth = op.path.includes('/self');
  const defaultAuth: Auth = selfAuth ? 'self' : 'admin';
  const bodyTypes = (op.body?.contentTypes ?? [])
    .map((type) => (Object.keys(MEDIA) as BodyType[]).find((key) => MEDIA[key] === type))
    .filter((type): type is BodyType => type !== undefined);

  /** Ids inside example objects (`allowed_to_push: [{user_id: 12}]`) replaced by real ones. */
  const realize = (value: unknown): unknown => {
    // An item naming a record by `id` (`{id: 17, _destroy: true}`) names one of another instance.
    if (Array.isArray(value))
      return value
        .filter((item) => !(typeof item === 'object' && item !== null && 'id' in item))
        .map(realize);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) => [
        key,
        key === 'user_id' ? fixture.member.id : key === 'group_id' ? fixture.group.id : realize(child),
      ]),
    );
  };

  const baseline = (): Plan => {
    const path = new Map<string, string>();
    for (const param of op.params.filter((p) => p.in === 'path'))
      path.set(param.name, percent(pathValue(op, param.name, fixture)));
    const query: Array<[string, string]> = [];
    for (const param of op.params.filter((p) => p.in === 'query' && p.required)) {
      const value = knownValue(op, param.name, fixture, serial) ?? param.example ?? exampleOf(param.schema);
      query.push(...plainValue(value).pairs!(param.name));
    }
    let body: Map<string, FuzzValue> | undefined;
    if (op.body) {
      body = new Map();
      const example = op.body.example ?? {};
      const names = new Set([...Object.keys(example), ...op.body.required]);
      for (const name of names) {
        // Example ids name records of another instance; real ones resolve here.
        const known = knownValue(op, name, fixture, ++serial);
        const value =
          known ??
          (name === 'name' || name === 'path' ? `fuzz-${++serial}` : undefined) ??
          realize(example[name]) ??
          exampleOf(op.body.properties[name] ?? {});
        body.set(name, plainValue(value));
      }
    }
    return { path, query, body, bodyType: bodyTypes[0] ?? 'json', headers: {}, auth: defaultAuth };
  };

  const render = (plan: Plan, extra: Partial<FuzzCase> & Pick<FuzzCase, 'category' | 'label'>): FuzzCase => {
    // An empty segment leaves the route: another operation, or none, answers.
    const anyRoute = [...plan.path.values()].some((value) => value === '');
    let path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => plan.path.get(name) ?? '');
    if (plan.query.length) path += `?${plan.query.map(([n, v]) => `${n}=${v}`).join('&')}`;
    const headers = { ...plan.headers };
    let body: Buffer | undefined;
    if (plan.body && plan.body.size > 0) {
      headers['Content-Type'] ??= CONTENT_TYPES[plan.bodyType];
      body = serializeBody(plan.body, plan.bodyType);
    }
    return {
      operationId: op.operationId,
      method: op.method,
      path: `/api/v4${path}`,
      headers,
      body,
      auth: plan.auth,
      fixture,
      anyRoute,
      ...extra,
    };
  };

  /** A case: `change` breaks the baseline plan, `finish` the rendered request. */
  const add = (
    category: Category,
    label: string,
    change: (plan: Plan) => void = () => undefined,
    finish: (request: FuzzCase) => void = () => undefined,
  ) =>
    specs.push({
      category,
      label,
      make: () => {
        const plan = baseline();
        change(plan);
        const request = render(plan, { category, label });
        finish(request);
        return request;
      },
    });

  // Valid requests, as each kind of caller and in each declared body type.
  add('valid', 'baseline');
  for (const type of bodyTypes.slice(1))
    add('valid', `baseline as ${type}`, (plan) => (plan.bodyType = type));
  add('valid', 'as a member', (plan) => (plan.auth = selfAuth ? 'self' : 'member'));
  add('valid', 'anonymous', (plan) => (plan.auth = 'anonymous'));
  if (op.method === 'GET') add('valid', 'HEAD', undefined, (request) => (request.method = 'HEAD'));
  if (op.path.startsWith('/projects/{id}') || op.path.startsWith('/groups/{id}')) {
    const fullPath = op.path.startsWith('/projects') ? fixture.project.fullPath : fixture.group.fullPath;
    add('valid', 'id as the full path', (plan) => plan.path.set('id', percent(fullPath)));
  }

  // Missing required parameters.
  for (const param of op.params.filter((p) => p.in === 'query' && p.required))
    add('missing', `without query ${param.name}`, (plan) => {
      plan.query = plan.query.filter(([name]) => name !== param.name && !name.startsWith(`${param.name}[`));
    });
  for (const name of op.body?.required ?? [])
    add('missing', `without body ${name}`, (plan) => plan.body!.delete(name));
  if (op.body) add('missing', 'no body at all', (plan) => (plan.body = undefined));
  for (const param of op.params.filter((p) => p.in === 'path'))
    add('missing', `empty path ${param.name}`, (plan) => plan.path.set(param.name, ''));

  // One parameter at a time, wherever the contract puts it.
  type Target = { where: 'path' | 'query' | 'body'; name: string; schema: Schema; valid?: string };
  const targets: Target[] = [
    ...op.params
      .filter((p) => p.in === 'path' || p.in === 'query')
      .map((p) => ({
        where: p.in as 'path' | 'query',
        name: p.name,
        schema: p.schema,
        valid: p.in === 'path' ? pathValue(op, p.name, fixture) : undefined,
      })),
    ...Object.entries(op.body?.properties ?? {}).map(([name, schema]) => ({
      where: 'body' as const,
      name,
      schema,
    })),
  ];
  const optionPool = optionValues(options.marker);
  const place = (plan: Plan, target: Target, value: FuzzValue, bodyType?: BodyType) => {
    if (target.where === 'path') plan.path.set(target.name, urlValue(value));
    else if (target.where === 'query') {
      plan.query = plan.query.filter(([name]) => name !== target.name && !name.startsWith(`${target.name}[`));
      plan.query.push(...valuePairs(target.name, value));
    } else {
      plan.body!.set(target.name, value);
      if (bodyType) plan.bodyType = bodyType;
    }
  };
  /** Out of range for a string: past `integer` and `bigint`. */
  const textRange = RANGE.filter((value) =>
    ['2147483648', '-2147483649', '4294967296', '9223372036854775808'].includes(value.label),
  );
  for (const target of targets) {
    const types = schemaTypes(target.schema);
    const numeric =
      types.has('integer') || types.has('number') || /(^|_)(id|ids|page|level|iid)$/.test(target.name);
    // A number's pool opens with one of the integer edges, so that even the fast sample sends them all.
    const edge = random.pick(INTEGER_EDGES);
    const values: FuzzValue[] = [
      ...wrongTypes(types, target.schema.enum as unknown[] | undefined),
      ...(numeric ? [edge, ...RANGE.filter((value) => value !== edge)] : textRange),
      ...(target.valid ? nearMisses(target.valid) : []),
      ...HUGE,
      ...ENCODING,
      ...TRAVERSAL,
      ...optionPool,
      ...ESCAPE,
      ...nestingValues(target.where !== 'body'),
    ];
    for (const value of values) {
      // Node refuses request heads over 16 KB: a megabyte in the URL is one case per operation, below.
      if (value.big && target.where !== 'body') continue;
      const bodyType = target.where === 'body' && bodyTypes.length > 1 ? random.pick(bodyTypes) : undefined;
      add(
        value.category,
        `${target.where} ${target.name} = ${value.label}${bodyType ? ` (${bodyType})` : ''}`,
        (plan) => place(plan, target, value, bodyType),
        (request) => (request.mustRefuse = value.refuse),
      );
    }
  }

  // Pages far past the end, up to the bounds: an empty page with the list's headers, never a database error.
  if (op.params.some((p) => p.in === 'query' && p.name === 'page'))
    for (const [page, perPage] of FAR_PAGES)
      add('range', `page far past the end = ${page}${perPage ? ` of ${perPage}` : ''}`, (plan) => {
        plan.query = plan.query.filter(([name]) => name !== 'page' && name !== 'per_page');
        plan.query.push(['page', page], ...(perPage ? [['per_page', perPage] as [string, string]] : []));
      });

  // A megabyte in the URL: Node's parser answers 431 before the server sees it.
  add('huge', 'query of 1 MB', (plan) => plan.query.push(['fuzz', 'a'.repeat(MEGABYTE)]));

  // The URL itself.
  const literal = op.path.split('/').findIndex((segment, i) => i > 0 && !segment.startsWith('{'));
  for (const value of ESCAPE.slice(0, 4))
    add('escape', `route segment ${value.raw}`, undefined, (request) => {
      const [path, query] = request.path.split('?');
      const segments = path.split('/');
      // `/api/v4` comes first: the operation's literal segment is two further on.
      segments[literal + 2] = value.raw!;
      request.path = segments.join('/') + (query === undefined ? '' : `?${query}`);
      request.anyRoute = true;
    });
  for (const [label, mutate] of [
    ['raw ../ in the path', (p: string) => p.replace('/api/v4/', '/api/v4/../api/v4/')],
    ['raw ../.. after the route', (p: string) => `${p.split('?')[0]}/../..`],
    ['double slashes', (p: string) => p.replace(/\//g, '//')],
    ['trailing slash', (p: string) => `${p.split('?')[0]}/`],
    ['raw byte ff in the path', (p: string) => `${p.split('?')[0]}\u00ff`],
  ] as const)
    add('traversal', label, undefined, (request) => {
      request.path = mutate(request.path);
      request.anyRoute = true;
    });
  for (const [label, pairs] of [
    [
      'query of empty pairs',
      [
        ['', ''],
        ['', ''],
        ['=', ''],
      ],
    ],
    ['query name %zz', [['%zz', '1']]],
    ['query name with NUL', [['a%00b', '1']]],
    [
      'query name [ only',
      [
        ['[', '1'],
        ['a[', '1'],
        [']]', '1'],
      ],
    ],
    [
      '__proto__ pollution',
      [
        ['__proto__[admin]', 'true'],
        ['constructor[prototype][admin]', 'true'],
      ],
    ],
    [
      'query parameter repeated',
      [
        ['page', '1'],
        ['page', '2'],
        ['per_page', '1'],
        ['per_page', 'x'],
      ],
    ],
    ['query of 1,000 pairs', Array.from({ length: 1_000 }, (_, i) => [`k${i}`, `${i}`])],
  ] as Array<[string, Array<[string, string]>]>)
    add('pollution', label, (plan) => plan.query.push(...pairs));

  // Bodies: malformed, mislabelled, compressed, nested, too large; on every operation, since every
  // request's body is read.
  for (const [label, type, body] of malformedBodies())
    add(
      'body',
      label,
      (plan) => {
        plan.body = undefined;
        if (type) plan.headers['Content-Type'] = type;
      },
      (request) => (request.body = body()),
    );
  for (const [label, type, encoding, bodyType, body] of compressedBodies(bodyTypes.includes('form')))
    add(
      'compressed',
      label,
      (plan) => {
        plan.bodyType = bodyType;
        plan.headers['Content-Type'] = type;
        plan.headers['Content-Encoding'] = encoding;
      },
      (request) => (request.body = body(request.body ?? Buffer.from('{}'))),
    );
  const bodyName = Object.keys(op.body?.properties ?? {})[0] ?? 'fuzz';
  for (const value of nestingValues(false))
    for (const type of ['json', 'form', 'multipart'] as BodyType[])
      add('nesting', `${type} body ${bodyName} = ${value.label}`, (plan) => {
        plan.body = new Map([...(plan.body ?? []), [bodyName, value]]);
        plan.bodyType = type;
        delete plan.headers['Content-Type'];
      });

  // Credentials and Sudo.
  for (const credential of credentialCases(fixture))
    add(
      'auth',
      credential.label,
      (plan) => {
        // Sudo on a `self` operation would rotate or revoke the administrator's own token.
        plan.auth = credential.auth === 'admin' ? defaultAuth : credential.auth;
        Object.assign(plan.headers, credential.headers);
        plan.query.push(...credential.query);
      },
      (request) =>
        (request.mustRefuse = credential.label.startsWith('sudo=') && /%(00|ff|ED)/i.test(credential.label)),
    );

  const mixes = (count: number): CaseSpec[] => {
    const mixed: CaseSpec[] = [];
    for (let i = 0; i < count && targets.length > 0; i++) {
      const picks: Array<[Target, FuzzValue]> = [];
      for (let n = 1 + random.int(3); n > 0; n--) {
        const target = random.pick(targets);
        const value = random.pick([
          ...RANGE,
          ...ENCODING,
          ...TRAVERSAL,
          ...optionPool,
          ...ESCAPE,
          ...wrongTypes(schemaTypes(target.schema)),
          ...HUGE.slice(3),
        ]);
        picks.push([target, value]);
      }
      const bodyType = bodyTypes.length ? random.pick(bodyTypes) : undefined;
      const auth = random.next() < 0.2 ? random.pick(['member', 'anonymous'] as Auth[]) : undefined;
      const label =
        picks.map(([t, v]) => `${t.where} ${t.name} = ${v.label}`).join('; ') + (auth ? ` as ${auth}` : '');
      const before = specs.length;
      add(
        'mixed',
        label,
        (plan) => {
          for (const [target, value] of picks) place(plan, target, value, bodyType);
          if (auth) plan.auth = auth;
        },
        (request) => (request.mustRefuse = picks.some(([, value]) => value.refuse)),
      );
      mixed.push(...specs.splice(before));
    }
    return mixed;
  };
  return { specs, mixes };
}

function serializeBody(body: Map<string, FuzzValue>, type: BodyType): Buffer {
  if (type === 'json') {
    const parts: Buffer[] = [Buffer.from('{')];
    let first = true;
    for (const [name, value] of body) {
      parts.push(Buffer.from(`${first ? '' : ','}${JSON.stringify(name)}:`), jsonValue(value));
      first = false;
    }
    parts.push(Buffer.from('}'));
    return Buffer.concat(parts);
  }
  const pairs = [...body].flatMap(([name, value]) => valuePairs(name, value));
  if (type === 'form') return Buffer.from(pairs.map(([n, v]) => `${n}=${v}`).join('&'), 'latin1');
  const parts: Buffer[] = [];
  for (const [name, value] of pairs) {
    parts.push(
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="`),
      unpercent(name),
      Buffer.from('"\r\n\r\n'),
      unpercent(value),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(parts);
}

/** Built once, on first use: these are megabytes. */
function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

const b = (text: string) => Buffer.from(text, 'latin1');
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const elevenMegabytes = once(() => b(`{"name":"${'a'.repeat(11 * MEGABYTE)}"}`));
const deepFieldName = once(() =>
  b(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="a${'[a]'.repeat(100_000)}"\r\n\r\n1\r\n--${BOUNDARY}--\r\n`,
  ),
);
const gzipBomb = once(() => zlib.gzipSync(Buffer.alloc(64 * MEGABYTE, 0x20)));

function malformedBodies(): Array<[string, string | undefined, () => Buffer]> {
  const fixed = (text: string | Buffer) => () => (typeof text === 'string' ? b(text) : text);
  return [
    ['truncated JSON', 'application/json', fixed('{"name":')],
    ['JSON array', 'application/json', fixed('[1,2,3]')],
    ['JSON scalar', 'application/json', fixed('12345678901234567890')],
    ['JSON string', 'application/json', fixed('"text"')],
    ['JSON null', 'application/json', fixed('null')],
    ['JSON with trailing garbage', 'application/json', fixed('{"a":1}}')],
    ['JSON with a byte-order mark', 'application/json', fixed(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))],
    ['JSON in UTF-16', 'application/json', fixed(Buffer.from('{"name":"x"}', 'utf16le'))],
    [
      'JSON of invalid UTF-8',
      'application/json',
      fixed(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])),
    ],
    [
      'JSON __proto__',
      'application/json',
      fixed('{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'),
    ],
    ['JSON duplicate keys', 'application/json', fixed('{"a":1,"a":{"b":2},"a":[3]}')],
    ['JSON number 1e400', 'application/json', fixed('{"id":1e400,"page":-1e400}')],
    ['JSON as text/plain', 'text/plain', fixed('{"name":"x"}')],
    ['no Content-Type', undefined, fixed('{"name":"x"}')],
    ['XML', 'application/xml', fixed('<?xml version="1.0"?><a>&lt;</a>')],
    ['JSON with a latin1 charset', 'application/json; charset=latin1', fixed('{"name":"\xe9"}')],
    ['Content-Type garbage', ';;;=;', fixed('a=1')],
    ['Content-Type of 8 KB', `application/json; x=${'a'.repeat(8000)}`, fixed('{}')],
    [
      'form of broken pairs',
      'application/x-www-form-urlencoded',
      fixed('=&&=&a[=1&a]]=2&[]=3&%zz=%zz&a=%ff%fe&b=%00'),
    ],
    [
      'form with raw bytes',
      'application/x-www-form-urlencoded',
      fixed(Buffer.from([0x61, 0x3d, 0xff, 0x00, 0xfe])),
    ],
    ['multipart without a boundary', 'multipart/form-data', fixed('--x\r\n\r\n')],
    [
      'multipart with another boundary',
      MULTIPART,
      fixed('--other\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--other--\r\n'),
    ],
    [
      'multipart cut short',
      MULTIPART,
      fixed(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\n1`),
    ],
    ['multipart without a disposition', MULTIPART, fixed(`--${BOUNDARY}\r\n\r\nx\r\n--${BOUNDARY}--\r\n`)],
    [
      'multipart with a file part',
      MULTIPART,
      fixed(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="../../x"\r\n\r\n${'x'.repeat(1000)}\r\n--${BOUNDARY}--\r\n`,
      ),
    ],
    ['multipart field name of 100,000 brackets', MULTIPART, deepFieldName],
    ['JSON of 11 MB', 'application/json', elevenMegabytes],
  ];
}

type Compressed = [
  label: string,
  type: string,
  encoding: string,
  bodyType: BodyType,
  body: (valid: Buffer) => Buffer,
];

function compressedBodies(form: boolean): Compressed[] {
  const garbageGzip = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('garbage')]);
  const garbage = Buffer.from('not deflate at all');
  const cases: Compressed[] = [];
  for (const type of ['application/json', 'application/x-www-form-urlencoded', MULTIPART]) {
    const short = type.split(';')[0];
    cases.push(
      [`corrupt gzip as ${short}`, type, 'gzip', 'json', () => garbageGzip],
      [`corrupt deflate as ${short}`, type, 'deflate', 'json', () => garbage],
      [`truncated gzip as ${short}`, type, 'gzip', 'json', (valid) => zlib.gzipSync(valid).subarray(0, 12)],
    );
  }
  cases.push(
    ['valid gzip JSON', 'application/json', 'gzip', 'json', (valid) => zlib.gzipSync(valid)],
    ['valid deflate JSON', 'application/json', 'deflate', 'json', (valid) => zlib.deflateSync(valid)],
    ['x-gzip JSON', 'application/json', 'x-gzip', 'json', (valid) => zlib.gzipSync(valid)],
    [
      'gzip of invalid UTF-8',
      'application/json',
      'gzip',
      'json',
      () => zlib.gzipSync(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])),
    ],
    ['gzip bomb of 64 MB', 'application/json', 'gzip', 'json', gzipBomb],
    [
      'gzip twice, announced once',
      'application/json',
      'gzip',
      'json',
      (valid) => zlib.gzipSync(zlib.gzipSync(valid)),
    ],
    [
      'gzip announced twice',
      'application/json',
      'gzip, gzip',
      'json',
      (valid) => zlib.gzipSync(zlib.gzipSync(valid)),
    ],
    ['brotli', 'application/json', 'br', 'json', () => garbage],
    ['unknown encoding', 'application/json', 'compress', 'json', () => garbage],
    ['gzip of an empty body', 'application/json', 'gzip', 'json', () => Buffer.alloc(0)],
  );
  if (form)
    cases.push([
      'valid gzip form',
      'application/x-www-form-urlencoded',
      'gzip',
      'form',
      (valid) => zlib.gzipSync(valid),
    ]);
  return cases;
}

interface Credential {
  label: string;
  auth: Auth;
  headers: Record<string, string>;
  query: Array<[string, string]>;
}

function credentialCases(fixture: Fixture): Credential[] {
  const latin1 = '\u00ff\u00fe';
  const custom = (
    label: string,
    headers: Record<string, string>,
    query: Array<[string, string]> = [],
  ): Credential => ({
    label,
    auth: 'custom',
    headers,
    query,
  });
  // Sudo goes with the administrator's token: it asks whom that token acts as.
  const sudo = (
    label: string,
    headers: Record<string, string>,
    query: Array<[string, string]> = [],
  ): Credential => ({
    label,
    auth: 'admin',
    headers,
    query,
  });
  return [
    custom('unknown token', { 'PRIVATE-TOKEN': 'glpat-xxxxxxxxxxxxxxxxxxxx' }),
    custom('token of latin1 bytes', { 'PRIVATE-TOKEN': latin1 }),
    custom('token of 8 KB', { 'PRIVATE-TOKEN': 'a'.repeat(8000) }),
    custom('empty Bearer', { Authorization: 'Bearer ' }),
    custom('Bearer of latin1 bytes', { Authorization: `Bearer ${latin1}` }),
    custom('Basic credentials', { Authorization: 'Basic Zm9vOmJhcg==' }),
    custom('Authorization garbage', { Authorization: '%zz' }),
    custom('JOB-TOKEN garbage', { 'JOB-TOKEN': 'x' }),
    custom('private_token NUL', {}, [['private_token', '%00']]),
    custom('private_token invalid UTF-8', {}, [['private_token', '%ff%fe']]),
    custom('private_token lone surrogate', {}, [['private_token', '%ED%A0%80']]),
    custom('private_token array', {}, [
      ['private_token[]', 'a'],
      ['private_token[]', 'b'],
    ]),
    custom('private_token object', {}, [['private_token[a]', 'b']]),
    custom('private_token bad escape', {}, [['private_token', '%zz']]),
    custom('job_token invalid UTF-8', {}, [['job_token', '%ff']]),
    custom('two different tokens', { 'PRIVATE-TOKEN': 'glpat-one' }, [['private_token', 'glpat-two']]),
    ...[
      '2147483648',
      '-1',
      '0',
      '1e308',
      'Infinity',
      '99999999999999999999',
      '1.5',
      String(fixture.member.id),
      fixture.member.username,
      'root',
      'nobody-at-all',
      '../..',
      ' ',
      '',
      latin1,
      'a'.repeat(8000),
    ].map((value) => sudo(`Sudo: ${JSON.stringify(value).slice(0, 40)}`, { Sudo: value })),
    ...['%00', '%ff%fe', '%ED%A0%80', '2147483648', '%zz'].map((value) =>
      sudo(`sudo=${value}`, {}, [['sudo', value]]),
    ),
    sudo('sudo array', {}, [
      ['sudo[]', '1'],
      ['sudo[]', '2'],
    ]),
    sudo('sudo object', {}, [['sudo[a]', '1']]),
  ];
}

/**
 * The rules of GitLab's published security report format (gitlab-org/security-products/
 * security-report-schemas, version 15.0.7, the latest GitLab vendors in lib/gitlab/ci/parsers/security/
 * validators/schemas), written here as JSON Schema (draft-07) from the format's documented rules for the
 * four report types this server reads: the required fields, their types, patterns, enumerations and
 * limits. Not a copy of the published files: their free-form parts (`details`, `tracking`) are only
 * checked to be objects.
 */

export const SECURITY_REPORT_TYPES = [
  'sast',
  'dependency_scanning',
  'secret_detection',
  'container_scanning',
] as const;
export type SecurityReportType = (typeof SECURITY_REPORT_TYPES)[number];

/** The schema versions validated against (GitLab's supported list for these rules). */
export const SUPPORTED_VERSIONS = ['15.0.7'] as const;

type Schema = Record<string, unknown>;

const str = (min = 1): Schema => ({ type: 'string', minLength: min });
const url = (pattern: string): Schema => ({ type: 'string', pattern });
const object = (required: string[], properties: Schema, extra: Schema = {}): Schema => ({
  type: 'object',
  required,
  properties,
  ...extra,
});

const TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$';
const LINK = '^(https?|ftp)://.+';

const identifier = object(['type', 'name', 'value'], {
  type: str(),
  name: str(),
  url: url(LINK),
  value: str(),
});

const component = (urlPattern?: string) =>
  object(['id', 'name', 'version', 'vendor'], {
    id: str(),
    name: str(),
    url: urlPattern ? url(urlPattern) : { type: 'string' },
    version: str(),
    vendor: object(['name'], { name: str() }),
  });

const scan = (type: SecurityReportType) =>
  object(['analyzer', 'end_time', 'scanner', 'start_time', 'status', 'type'], {
    analyzer: component('^https?://.+'),
    scanner: component(),
    start_time: { type: 'string', pattern: TIME },
    end_time: { type: 'string', pattern: TIME },
    status: { type: 'string', enum: ['success', 'failure'] },
    type: { type: 'string', enum: [type] },
    messages: {
      type: 'array',
      items: object(['level', 'value'], {
        level: { type: 'string', enum: ['info', 'warn', 'fatal'] },
        value: str(),
      }),
    },
    options: {
      type: 'array',
      items: object(['name', 'value'], {
        name: { type: 'string', minLength: 1, maxLength: 255 },
        source: { type: 'string', enum: ['argument', 'file', 'env_variable', 'other'] },
        value: { type: ['boolean', 'integer', 'null', 'string'] },
      }),
    },
    primary_identifiers: { type: 'array', items: identifier },
  });

const dependency = object(['package', 'version'], {
  package: object(['name'], { name: { type: 'string' } }),
  version: { type: 'string' },
  iid: { type: 'number' },
  direct: { type: 'boolean' },
  dependency_path: { type: 'array', items: object(['iid'], { iid: { type: 'number' } }) },
});

const fileLines = {
  file: { type: 'string' },
  start_line: { type: 'number' },
  end_line: { type: 'number' },
  class: { type: 'string' },
  method: { type: 'string' },
};

const LOCATIONS: Record<SecurityReportType, Schema> = {
  sast: { type: 'object', properties: fileLines },
  secret_detection: object(['commit'], {
    ...fileLines,
    commit: object(['sha'], {
      author: { type: 'string' },
      date: { type: 'string' },
      message: { type: 'string' },
      sha: str(),
    }),
  }),
  dependency_scanning: object(['file', 'dependency'], { file: str(), dependency }),
  container_scanning: object(['dependency', 'operating_system', 'image'], {
    dependency,
    operating_system: str(),
    image: str(),
    default_branch_image: { type: 'string', maxLength: 255 },
  }),
};

const vulnerability = (type: SecurityReportType) =>
  object(['id', 'identifiers', 'location'], {
    id: str(),
    name: { type: 'string', maxLength: 255 },
    description: { type: 'string', maxLength: 1048576 },
    severity: { type: 'string', enum: ['Info', 'Unknown', 'Low', 'Medium', 'High', 'Critical'] },
    solution: { type: 'string', maxLength: 7000 },
    identifiers: { type: 'array', minItems: 1, items: identifier },
    cvss_vectors: {
      type: 'array',
      minItems: 1,
      maxItems: 10,
      items: object(['vendor', 'vector'], {
        vendor: str(),
        vector: { type: 'string', minLength: 16, maxLength: 128 },
      }),
    },
    links: { type: 'array', items: object(['url'], { name: { type: 'string' }, url: url(LINK) }) },
    details: { type: 'object' },
    tracking: { type: 'object' },
    flags: {
      type: 'array',
      items: object(['type', 'origin', 'description'], {
        type: { type: 'string', enum: ['flagged-as-likely-false-positive'] },
        origin: str(),
        description: str(),
      }),
    },
    location: LOCATIONS[type],
    raw_source_code_extract: { type: 'string' },
  });

const remediation = object(['fixes', 'summary', 'diff'], {
  fixes: { type: 'array', items: object(['id'], { id: str() }) },
  summary: str(),
  diff: str(),
});

const dependencyFile = object(['path', 'package_manager', 'dependencies'], {
  path: str(),
  package_manager: str(),
  dependencies: { type: 'array', items: dependency },
});

/** The schema of a report type. */
export function securityReportSchema(type: SecurityReportType): Schema {
  const required = ['scan', 'version', 'vulnerabilities'];
  const properties: Schema = {
    scan: scan(type),
    schema: url('^https?://.+'),
    version: { type: 'string', pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$' },
    vulnerabilities: { type: 'array', items: vulnerability(type) },
    remediations: { type: 'array', items: remediation },
  };
  if (type === 'dependency_scanning') {
    required.unshift('dependency_files');
    properties.dependency_files = { type: 'array', items: dependencyFile };
  }
  return { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required, properties };
}

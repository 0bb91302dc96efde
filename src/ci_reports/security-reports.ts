/**
 * Security reports (`sast`, `dependency_scanning`, `secret_detection`, `container_scanning`), checked as
 * GitLab's `Security::Validators::SchemaValidator` checks them: a report must declare a supported
 * schema `version` (a supported MAJOR.MINOR with another PATCH is validated against the supported patch,
 * with a warning); an unsupported or missing version is an error, and the report is still validated
 * against the earliest supported version to show every error. A report with errors keeps its artifact
 * but is not ingested: it is stored with its errors and no findings. A valid report's vulnerabilities
 * are its findings.
 */
import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import { SUPPORTED_VERSIONS, securityReportSchema, type SecurityReportType } from './security-schemas.js';

export interface SecurityFinding {
  uuid: string;
  name: string | null;
  severity: string | null;
  primaryIdentifier: unknown;
  location: unknown;
  raw: Record<string, unknown>;
}

export interface CheckedSecurityReport {
  version: string | null;
  valid: boolean;
  errors: string[];
  warnings: string[];
  scanner: unknown;
  findings: SecurityFinding[];
}

const Ajv = AjvModule as unknown as typeof AjvModule.default;
const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<SecurityReportType, ValidateFunction>();

function validator(type: SecurityReportType): ValidateFunction {
  let validate = validators.get(type);
  if (!validate) {
    validate = ajv.compile(securityReportSchema(type));
    validators.set(type, validate);
  }
  return validate;
}

const VERSION = /^[0-9]+\.[0-9]+\.[0-9]+$/;

/** An ajv error as JSONSchemer's `pretty` words it. */
export function prettyError(error: ErrorObject): string {
  const where = error.instancePath ? `property '${error.instancePath}'` : 'root';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${where} is missing required keys: ${String(params.missingProperty)}`;
    case 'type':
      return `${where} is not of type: ${String(params.type)}`;
    case 'enum':
      return `${where} is not one of: ${JSON.stringify(params.allowedValues)}`;
    case 'pattern':
      return `${where} does not match pattern: ${String(params.pattern)}`;
    case 'format':
      return `${where} does not match format: ${String(params.format)}`;
    default:
      return `${where} is invalid: error_type=${error.keyword}`;
  }
}

const supportedList = () => SUPPORTED_VERSIONS.join(', ');

function versionMessages(type: SecurityReportType, version: string | null) {
  const errors: string[] = [];
  const warnings: string[] = [];
  const supported = (SUPPORTED_VERSIONS as readonly string[]).includes(version ?? '');
  const sameMinor =
    version !== null &&
    VERSION.test(version) &&
    SUPPORTED_VERSIONS.find(
      (v) => v.split('.').slice(0, 2).join('.') === version.split('.').slice(0, 2).join('.'),
    );
  const tail =
    'GitLab will attempt to validate this report against the earliest supported versions of this report type, to show all the errors but will not ingest the report';
  if (supported) return { errors, warnings };
  if (sameMinor) {
    warnings.push(
      "This report uses a supported MAJOR.MINOR schema version but the PATCH version doesn't match any vendored schema version. " +
        `Validation will be attempted against version ${sameMinor}`,
    );
  } else if (version === null) {
    errors.push(
      `Report version not provided, ${type} report type supports versions: ${supportedList()}. ${tail}`,
    );
  } else {
    errors.push(
      `Version ${version} for report type ${type} is unsupported, supported versions for this report type are: ${supportedList()}. ${tail}`,
    );
  }
  return { errors, warnings };
}

function findings(report: Record<string, unknown>): SecurityFinding[] {
  const vulnerabilities = (report.vulnerabilities ?? []) as Array<Record<string, unknown>>;
  return vulnerabilities.map((v) => ({
    uuid: String(v.id),
    name: typeof v.name === 'string' ? v.name : null,
    severity: typeof v.severity === 'string' ? v.severity : null,
    primaryIdentifier: (v.identifiers as unknown[] | undefined)?.[0] ?? null,
    location: v.location ?? null,
    raw: v,
  }));
}

/** Checks a security report's JSON text. */
export function checkSecurityReport(type: SecurityReportType, json: string): CheckedSecurityReport {
  let report: unknown;
  try {
    report = JSON.parse(json.startsWith('\uFEFF') ? json.slice(1) : json);
  } catch {
    return {
      version: null,
      valid: false,
      errors: ['JSON parsing failed'],
      warnings: [],
      scanner: null,
      findings: [],
    };
  }
  if (!report || typeof report !== 'object' || Array.isArray(report))
    return {
      version: null,
      valid: false,
      errors: ['Invalid report format'],
      warnings: [],
      scanner: null,
      findings: [],
    };
  const data = report as Record<string, unknown>;
  const version = typeof data.version === 'string' ? data.version : null;
  const { errors, warnings } = versionMessages(type, version);
  if (version !== null && VERSION.test(version)) {
    const validate = validator(type);
    if (!validate(data)) errors.push(...(validate.errors ?? []).map(prettyError));
  }
  const scan = data.scan as Record<string, unknown> | undefined;
  const valid = errors.length === 0;
  return {
    version,
    valid,
    errors,
    warnings,
    scanner: scan && typeof scan === 'object' ? (scan.scanner ?? null) : null,
    findings: valid ? findings(data) : [],
  };
}

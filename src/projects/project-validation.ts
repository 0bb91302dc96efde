/** What a new or renamed project must satisfy, and the writes creation and forking share. */
import { type EntityManager } from 'typeorm';
import { ApiError, validationFailed } from '../core/errors.js';
import { AccessLevel } from '../core/access-level.js';
import {
  ProtectedBranch,
  ProtectedBranchAccessLevel,
} from '../protected_branches/protected-branch.entity.js';
import { Project } from './project.entity.js';
import { isUniqueViolation } from '../db/errors.js';

const PATH_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
const PATH_MESSAGE =
  "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', '.', end in '.git' or end in '.atom'";
const NAME_PATTERN = /^[\p{L}\p{N}\p{Emoji_Presentation}_][\p{L}\p{N}\p{Emoji_Presentation}_.+\- ]*$/u;
const NAME_MESSAGE =
  "can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'.";

export function pathFromName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
}

/** What `find`'s statement says of a project for one caller, before the caller's own checks. */

/** GitLab's default protection of a new project's default branch: Maintainers push and merge. */
export async function protectDefaultBranch(
  tx: EntityManager,
  projectId: number,
  branch: string,
): Promise<void> {
  const rule = await tx.getRepository(ProtectedBranch).save({ projectId, name: branch });
  await tx.getRepository(ProtectedBranchAccessLevel).insert(
    (['push', 'merge'] as const).map((action) => ({
      protectedBranchId: rule.id,
      action,
      accessLevel: AccessLevel.Maintainer,
    })),
  );
}

export function checkNameAndPath(name: string, path: string): void {
  const errors: Record<string, string[]> = {};
  if (!PATH_PATTERN.test(path) || /\.(git|atom)$/.test(path)) errors.path = [PATH_MESSAGE];
  if (!NAME_PATTERN.test(name)) errors.name = [NAME_MESSAGE];
  if (Object.keys(errors).length) throw validationFailed(errors);
}

/** Name and path are unique in a namespace, case-insensitively; `exceptId` is the project being renamed. */
export async function assertAvailable(
  tx: EntityManager,
  namespaceId: number,
  name: string,
  path: string,
  exceptId?: number,
): Promise<void> {
  const query = tx
    .getRepository(Project)
    .createQueryBuilder('p')
    .where('p.namespace_id = :ns', { ns: namespaceId })
    .andWhere('(lower(p.path) = lower(:path) OR lower(p.name) = lower(:name))', { path, name });
  if (exceptId !== undefined) query.andWhere('p.id <> :exceptId', { exceptId });
  const taken = await query.getMany();
  const conflicts: Record<string, string[]> = {};
  if (taken.some((p) => p.path.toLowerCase() === path.toLowerCase()))
    conflicts.path = ['has already been taken'];
  if (taken.some((p) => p.name.toLowerCase() === name.toLowerCase()))
    conflicts.name = ['has already been taken'];
  if (Object.keys(conflicts).length) throw validationFailed(conflicts);
}

/** GitLab answers a fork's record errors with 409 (`conflict!`), where creation answers 400. */
export function asConflict<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw toConflict(err);
  }
}

export async function asConflictAsync<T>(check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    throw toConflict(err);
  }
}

const toConflict = (err: unknown) =>
  err instanceof ApiError && err.status === 400 && typeof err.body === 'object' && 'message' in err.body
    ? new ApiError(409, err.body)
    : err;

/** A concurrent write may take the path between the check and the write: the unique index decides. */
export async function saveUnique<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw validationFailed({ path: ['has already been taken'] });
    }
    throw err;
  }
}

export function dedupeTopics(topics: string[]): string[] {
  const seen = new Set<string>();
  return topics
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter((t) => t && !seen.has(t.toLowerCase()) && seen.add(t.toLowerCase()));
}

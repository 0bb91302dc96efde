/**
 * Names a new ref may have: git's own rules, checked without a process (a 1 MB name must not become a
 * 1 MB argument), and GitLab's reserved forms on top.
 */
/** Characters `git check-ref-format` refuses anywhere in a ref name. */
const REF_FORBIDDEN = /[\x00-\x20\x7f~^:?*[\\]|\.\.|@\{|\/\/|^\/|\/$|\.$/;
/** The longest file name the file systems git stores loose refs on accept, per component. */
const MAX_REF_COMPONENT_BYTES = 255;

/**
 * GitLab's check of a new ref name (`refs/heads/x`, `refs/tags/x`): `git check-ref-format`'s rules,
 * without a process (a 1 MB name must not become a 1 MB argument), plus what a loose ref's file can be.
 */
export function isValidRefName(ref: string): boolean {
  if (ref === '@' || REF_FORBIDDEN.test(ref)) return false;
  const components = ref.split('/');
  if (components.length < 2) return false;
  return components.every(
    (component) =>
      component !== '' &&
      !component.startsWith('.') &&
      !component.endsWith('.lock') &&
      Buffer.byteLength(component) <= MAX_REF_COMPONENT_BYTES,
  );
}

/** Forms GitLab refuses for a new branch or tag: they would be read as another ref or as an option. */
const RESERVED_PREFIXES = ['-', 'refs/heads/', 'refs/remotes/', 'refs/tags/'];

/** A name git would read as an object id rather than as a branch. */
export const looksLikeObjectId = (name: string): boolean => /^([0-9a-f]{40}|[0-9a-f]{64})$/i.test(name);

const reserved = (name: string) =>
  name === '' || name === 'HEAD' || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix));

/** GitLab's check of a new branch name (an object id's look is refused apart, with its own message). */
export const isValidBranchName = (name: string): boolean =>
  !reserved(name) && isValidRefName(`refs/heads/${name}`);

/** GitLab's check of a new tag name. */
export const isValidTagName = (name: string): boolean =>
  !reserved(name) && isValidRefName(`refs/tags/${name}`);

/** The characters git trims from both ends of a name or e-mail (ident.c's "crud"). */
const IDENT_CRUD = /^[\x00-\x20.,:;<>"\\']+|[\x00-\x20.,:;<>"\\']+$/g;

/**
 * Whether git can write `name` into a commit: it drops `<`, `>` and newlines anywhere and trims its
 * crud from the ends, and refuses a name with nothing left.
 */
export const isUsableIdentityName = (name: string): boolean =>
  name.replace(/[<>\n]/g, '').replace(IDENT_CRUD, '').length > 0;

const OBJECT_ID = /^([0-9a-f]{40}|[0-9a-f]{64})$/;

export function assertObjectId(id: string): void {
  // Object ids come from git itself; anything else here is a bug, never user input to pass on.
  if (!OBJECT_ID.test(id)) throw new Error(`not an object id: ${JSON.stringify(id)}`);
}

/**
 * Path globs as GitLab matches `changes` and `exists` (File.fnmatch with FNM_PATHNAME, FNM_DOTMATCH
 * and FNM_EXTGLOB): `*` stays within a directory, `**` crosses them, dotfiles match, `{a,b}` works.
 */
import picomatch from 'picomatch';

const cache = new Map<string, (path: string) => boolean>();

export function globMatcher(glob: string): (path: string) => boolean {
  let m = cache.get(glob);
  if (!m) {
    m = picomatch(glob.replace(/^\.?\//, ''), { dot: true, nobrace: false, noextglob: true });
    if (cache.size > 5000) cache.clear();
    cache.set(glob, m);
  }
  return m;
}

export function anyPathMatches(paths: string[], globs: string[]): boolean {
  const matchers = globs.map(globMatcher);
  return paths.some((p) => matchers.some((m) => m(p)));
}

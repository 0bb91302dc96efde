import { gemoji } from 'gemoji';

/**
 * The emoji names GitLab accepts, from GitHub's gemoji set (the names GitLab's emoji index is keyed by,
 * `thumbsup` and `+1` alike), loaded once. Custom emoji are not supported.
 */
const NAMES: ReadonlySet<string> = new Set(gemoji.flatMap((entry) => entry.names));

export const isEmojiName = (name: string) => NAMES.has(name);

/**
 * The license of a repository, found the way GitLab shows it: a LICENSE (or COPYING) file at the root of
 * the default branch, recognised by the phrases that set the common licenses apart.
 */
import { git, gitText } from './git.js';

export interface DetectedLicense {
  path: string;
  key: string;
  name: string;
  nickname: string | null;
  html_url: string | null;
  source_url: string | null;
}

interface Known {
  key: string;
  name: string;
  nickname: string | null;
  source: string | null;
  /** Every pattern must match the normalised text. */
  patterns: RegExp[];
}

/** Ordered so that a license that quotes another (LGPL quotes the GPL) is tried first. */
const KNOWN: Known[] = [
  {
    key: 'agpl-3.0',
    name: 'GNU Affero General Public License v3.0',
    nickname: 'GNU AGPLv3',
    source: 'https://www.gnu.org/licenses/agpl-3.0.txt',
    patterns: [/gnu affero general public license/, /version 3/],
  },
  {
    key: 'lgpl-3.0',
    name: 'GNU Lesser General Public License v3.0',
    nickname: 'GNU LGPLv3',
    source: 'https://www.gnu.org/licenses/lgpl-3.0.txt',
    patterns: [/gnu lesser general public license/, /version 3/],
  },
  {
    key: 'lgpl-2.1',
    name: 'GNU Lesser General Public License v2.1',
    nickname: 'GNU LGPLv2.1',
    source: 'https://www.gnu.org/licenses/old-licenses/lgpl-2.1.txt',
    patterns: [/gnu lesser general public license/, /version 2\.1/],
  },
  {
    key: 'gpl-3.0',
    name: 'GNU General Public License v3.0',
    nickname: 'GNU GPLv3',
    source: 'https://www.gnu.org/licenses/gpl-3.0.txt',
    patterns: [/gnu general public license/, /version 3/],
  },
  {
    key: 'gpl-2.0',
    name: 'GNU General Public License v2.0',
    nickname: 'GNU GPLv2',
    source: 'https://www.gnu.org/licenses/old-licenses/gpl-2.0.txt',
    patterns: [/gnu general public license/, /version 2/],
  },
  {
    key: 'apache-2.0',
    name: 'Apache License 2.0',
    nickname: null,
    source: 'https://www.apache.org/licenses/LICENSE-2.0.html',
    patterns: [/apache license/, /version 2\.0/],
  },
  {
    key: 'mpl-2.0',
    name: 'Mozilla Public License 2.0',
    nickname: null,
    source: 'https://www.mozilla.org/media/MPL/2.0/index.txt',
    patterns: [/mozilla public license/, /2\.0/],
  },
  {
    key: 'bsd-3-clause',
    name: 'BSD 3-Clause "New" or "Revised" License',
    nickname: null,
    source: 'https://opensource.org/licenses/BSD-3-Clause',
    patterns: [/redistribution and use in source and binary forms/, /neither the name of/],
  },
  {
    key: 'bsd-2-clause',
    name: 'BSD 2-Clause "Simplified" License',
    nickname: null,
    source: 'https://opensource.org/licenses/BSD-2-Clause',
    patterns: [/redistribution and use in source and binary forms/],
  },
  {
    key: 'mit',
    name: 'MIT License',
    nickname: null,
    source: 'https://opensource.org/licenses/MIT',
    patterns: [/permission is hereby granted, free of charge/, /the above copyright notice/],
  },
  {
    key: 'isc',
    name: 'ISC License',
    nickname: null,
    source: 'https://opensource.org/licenses/ISC',
    patterns: [/permission to use, copy, modify, and\/or distribute this software/],
  },
  {
    key: 'unlicense',
    name: 'The Unlicense',
    nickname: null,
    source: 'https://unlicense.org/',
    patterns: [/this is free and unencumbered software released into the public domain/],
  },
];

const LICENSE_FILE = /^(un)?licen[cs]e([.-][\w.-]+)?$|^copying([.-][\w.-]+)?$/i;
/** Enough to recognise any license text; larger files are not licenses. */
const MAX_BYTES = 128 * 1024;

export function identifyLicense(text: string): Omit<DetectedLicense, 'path'> {
  const normalised = text.toLowerCase().replace(/\s+/g, ' ');
  const known = KNOWN.find((license) => license.patterns.every((pattern) => pattern.test(normalised)));
  if (!known) return { key: 'other', name: 'Other', nickname: null, html_url: null, source_url: null };
  return {
    key: known.key,
    name: known.name,
    nickname: known.nickname,
    html_url: `https://choosealicense.com/licenses/${known.key}/`,
    source_url: known.source,
  };
}

/** The license file at the root of `branch`, identified; null when there is none. */
export async function detectLicense(dir: string, branch: string | null): Promise<DetectedLicense | null> {
  if (!branch) return null;
  const listing = await git(['ls-tree', '-l', '--end-of-options', `refs/heads/${branch}`], {
    gitDir: dir,
    okCodes: [128],
  });
  if (listing.code !== 0) return null;
  const entry = listing.stdout
    .toString('utf8')
    .split('\n')
    .map((line) => /^\d+ blob ([0-9a-f]+)\s+(\d+)\t(.+)$/.exec(line))
    .find((match) => match && LICENSE_FILE.test(match[3]));
  if (!entry || Number(entry[2]) > MAX_BYTES) return null;
  const text = await gitText(['cat-file', 'blob', entry[1]], { gitDir: dir });
  return { path: entry[3], ...identifyLicense(text) };
}

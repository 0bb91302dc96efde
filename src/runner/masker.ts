/**
 * Replaces every masked value in a job's output with `[MASKED]`, as GitLab Runner's trace masker does,
 * also when a value arrives split across writes: the longest tail that may still begin a value is held
 * back (at most the longest value's length minus one byte) until the next write or the end.
 */
export const MASK = Buffer.from('[MASKED]');

export class Masker {
  private readonly phrases: Buffer[];
  private pending: Buffer = Buffer.alloc(0);

  constructor(values: readonly string[]) {
    // Unique, non-empty, longest first: at one position the longest value wins.
    const unique = [...new Set(values.filter((value) => value.length > 0))];
    this.phrases = unique.map((value) => Buffer.from(value)).sort((a, b) => b.length - a.length);
  }

  /** The masked bytes that are safe to send now. */
  write(chunk: Buffer): Buffer {
    if (this.phrases.length === 0) return chunk;
    const data = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const { out, rest } = this.scan(data, false);
    this.pending = rest;
    return out;
  }

  /** Whatever is held back, masked as far as it goes: the output has ended. */
  end(): Buffer {
    const { out } = this.scan(this.pending, true);
    this.pending = Buffer.alloc(0);
    return out;
  }

  /**
   * Earliest position wins: a tail that may still become a value is held back when it begins at or
   * before the next full match (a longer value may complete there once more output arrives).
   */
  private scan(data: Buffer, atEnd: boolean): { out: Buffer; rest: Buffer } {
    const parts: Buffer[] = [];
    let from = 0;
    for (;;) {
      const match = this.firstMatch(data, from);
      const partial = atEnd ? -1 : this.partialStart(data, from);
      if (partial >= 0 && (!match || partial <= match.at)) {
        parts.push(data.subarray(from, partial));
        return { out: Buffer.concat(parts), rest: Buffer.from(data.subarray(partial)) };
      }
      if (!match) break;
      parts.push(data.subarray(from, match.at), MASK);
      from = match.at + match.length;
    }
    parts.push(data.subarray(from));
    return { out: Buffer.concat(parts), rest: Buffer.alloc(0) };
  }

  /** The earliest full occurrence of any value at or after `from` (longest first at one position). */
  private firstMatch(data: Buffer, from: number): { at: number; length: number } | null {
    let best: { at: number; length: number } | null = null;
    for (const phrase of this.phrases) {
      const at = data.indexOf(phrase, from);
      if (at >= 0 && (!best || at < best.at)) best = { at, length: phrase.length };
    }
    return best;
  }

  /** Where the earliest tail that is a proper prefix of some value begins (-1 when none). */
  private partialStart(data: Buffer, from: number): number {
    const longest = this.phrases[0].length;
    for (let start = Math.max(from, data.length - longest + 1); start < data.length; start++) {
      const tail = data.subarray(start);
      if (this.phrases.some((p) => p.length > tail.length && p.subarray(0, tail.length).equals(tail)))
        return start;
    }
    return -1;
  }
}

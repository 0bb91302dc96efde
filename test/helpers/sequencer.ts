/**
 * Starts the longest test files first, so that the workers finish together instead of one of them
 * picking up a slow file last while the others have nothing left to do.
 *
 * A file's duration is the one of its last local run (vitest's cache), else the one recorded in
 * file-seconds.json (a fresh clone has no cache; `FORGE_TEST_RECORD_SECONDS=1 make test` rewrites it).
 * Files known to neither go first, larger first, as vitest's own sequencer does: a new file may be slow.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const recordedFile = new URL('./file-seconds.json', import.meta.url);

function recordedSeconds(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(recordedFile, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const recorded = recordedSeconds();
    const root = this.ctx.config.root;
    const durationMs = (spec: TestSpecification): number | undefined => {
      const file = path.relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      if (cached && cached.duration > 0) return cached.duration;
      const seconds = recorded[file.split(path.sep).join('/')];
      return seconds === undefined ? undefined : seconds * 1000;
    };
    const size = (spec: TestSpecification) =>
      fs.statSync(spec.moduleId, { throwIfNoEntry: false })?.size ?? 0;
    const keyed = files.map((spec) => ({ spec, duration: durationMs(spec), size: size(spec) }));
    keyed.sort((a, b) => {
      if (a.duration === undefined || b.duration === undefined)
        return a.duration === b.duration ? b.size - a.size : a.duration === undefined ? -1 : 1;
      return b.duration - a.duration;
    });
    return keyed.map(({ spec }) => spec);
  }
}

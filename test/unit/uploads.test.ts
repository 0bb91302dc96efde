import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepUploadSpool } from '../../src/core/http.js';
import { uploadHeaders } from '../../src/uploads/content-types.js';
import { sanitizeFilename } from '../../src/uploads/uploads.service.js';

describe('sanitizeFilename', () => {
  it.each([
    ['screen shot (1).png', 'screen_shot__1_.png'],
    ['été.txt', 'été.txt'],
    ['a/b\\c.txt', 'c.txt'],
    ['..', '_..'],
    ['.', '_.'],
    ['<script>.html', '_script_.html'],
    [`${'x'.repeat(300)}.png`, `${'x'.repeat(251)}.png`],
  ])('%s becomes %s', (name, expected) => {
    expect(sanitizeFilename(name)).toBe(expected);
  });
});

describe('uploadHeaders', () => {
  it('serves media inline and everything else as an attachment, with an ASCII file name', () => {
    expect(uploadHeaders('a.png', 3)).toMatchObject({
      'Content-Type': 'image/png',
      'Content-Disposition': `inline; filename="a.png"; filename*=UTF-8''a.png`,
      'Content-Length': '3',
    });
    expect(uploadHeaders('été.svg')).toMatchObject({
      'Content-Type': 'image/svg+xml',
      'Content-Disposition': `attachment; filename="_t_.svg"; filename*=UTF-8''%C3%A9t%C3%A9.svg`,
    });
    expect(uploadHeaders('run')['Content-Type']).toBe('application/octet-stream');
  });
});

describe('sweepUploadSpool', () => {
  it('removes only files older than the cut-off', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-'));
    fs.writeFileSync(path.join(dir, 'upload-old'), 'x');
    fs.utimesSync(path.join(dir, 'upload-old'), new Date(0), new Date(0));
    fs.writeFileSync(path.join(dir, 'upload-new'), 'x');
    expect(await sweepUploadSpool(dir, new Date(Date.now() - 60_000))).toBe(1);
    expect(fs.readdirSync(dir)).toEqual(['upload-new']);
    expect(await sweepUploadSpool(path.join(dir, 'missing'), new Date())).toBe(0);
    fs.rmSync(dir, { recursive: true });
  });
});

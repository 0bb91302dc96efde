import { describe, expect, it } from 'vitest';
import { escapeHtml, stripTags } from '../../src/core/html.js';

describe('stripTags', () => {
  it.each([
    ['<b>bug</b>', 'bug'],
    ['a < b and c > d', 'a < b and c > d'],
    ['x<script>alert(1)</script>y', 'xy'],
    ['<img src=x onerror=alert(1)>pic', 'pic'],
    ['Tom &amp; Jerry &lt;3', 'Tom & Jerry <3'],
    ['&#x1F41B; &#128027;', '🐛 🐛'],
    ['&unknown; &#xD800;', '&unknown; &#xD800;'],
    ['<!-- note -->text', 'text'],
  ])('%j becomes %j', (input, expected) => {
    expect(stripTags(input)).toBe(expected);
  });
});

describe('escapeHtml', () => {
  it('escapes every character that could open markup or end an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

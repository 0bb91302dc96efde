import { describe, expect, it } from 'vitest';
import { WeightedLruCache } from '../../src/core/lru.js';

describe('WeightedLruCache', () => {
  it('forgets the least recently used entries once their weights pass the budget', () => {
    const cache = new WeightedLruCache<string, string>(10, (value) => value.length);
    cache.set('a', 'xxxx');
    cache.set('b', 'xxxx');
    expect(cache.get('a')).toBe('xxxx');
    cache.set('c', 'xxxx');
    // b was used least recently: it goes, and a and c (8 of 10) stay.
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('xxxx');
    expect(cache.get('c')).toBe('xxxx');
  });

  it('counts a replaced value once, and never keeps a value heavier than the budget', () => {
    const cache = new WeightedLruCache<string, string>(10, (value) => value.length);
    cache.set('a', 'xxxxxx');
    cache.set('a', 'xxxxxx');
    cache.set('b', 'xxxx');
    expect(cache.get('a')).toBe('xxxxxx');
    expect(cache.get('b')).toBe('xxxx');
    cache.set('huge', 'x'.repeat(11));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('a')).toBe('xxxxxx');
    cache.delete('a');
    cache.set('c', 'xxxxxx');
    expect(cache.get('b')).toBe('xxxx');
    expect(cache.get('c')).toBe('xxxxxx');
  });

  it('lists its entries least recently used first, and frees their weight when deleted or cleared', () => {
    const cache = new WeightedLruCache<string, string>(10, (value) => value.length);
    cache.set('a', 'xxxx');
    cache.set('b', 'xxxx');
    cache.get('a');
    expect([...cache]).toEqual([
      ['b', 'xxxx'],
      ['a', 'xxxx'],
    ]);
    for (const [key] of cache) if (key === 'b') cache.delete(key);
    cache.set('c', 'xxxxxx');
    expect([...cache].map(([key]) => key)).toEqual(['a', 'c']);
    cache.clear();
    expect([...cache]).toEqual([]);
    cache.set('d', 'x'.repeat(10));
    expect(cache.get('d')).toBe('x'.repeat(10));
  });
});

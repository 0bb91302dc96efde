import { describe, expect, it } from 'vitest';
import { identifyLicense } from '../../src/git/license.js';

describe('identifyLicense', () => {
  it.each([
    [
      'mit',
      'MIT License\n\nPermission is hereby granted, free of charge, to any person ... The above copyright notice',
    ],
    ['apache-2.0', 'Apache License\n   Version 2.0, January 2004\n http://www.apache.org/licenses/'],
    ['gpl-3.0', 'GNU GENERAL PUBLIC LICENSE\n Version 3, 29 June 2007'],
    ['gpl-2.0', 'GNU GENERAL PUBLIC LICENSE\n Version 2, June 1991'],
    [
      'lgpl-3.0',
      'GNU LESSER GENERAL PUBLIC LICENSE\n Version 3, 29 June 2007 ... GNU General Public License',
    ],
    ['agpl-3.0', 'GNU AFFERO GENERAL PUBLIC LICENSE\n Version 3, 19 November 2007'],
    [
      'bsd-3-clause',
      'Redistribution and use in source and binary forms, with or without ... Neither the name of',
    ],
    ['bsd-2-clause', 'Redistribution and use in source and binary forms, with or without modification'],
    ['unlicense', 'This is free and unencumbered software released into the public domain.'],
    ['other', 'All rights reserved. Ask us before you use this.'],
  ])('recognises %s', (key, text) => {
    expect(identifyLicense(text).key).toBe(key);
  });

  it('gives the other license no links', () => {
    expect(identifyLicense('proprietary')).toEqual({
      key: 'other',
      name: 'Other',
      nickname: null,
      html_url: null,
      source_url: null,
    });
  });
});

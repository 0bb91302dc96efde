import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'generated/', 'node_modules/', 'data/', 'docs/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
);

import tseslint from 'typescript-eslint';

/** A comparison with an access level, written by hand (`level >= AccessLevel.Developer`, `x.accessLevel < y`). */
const LEVEL = '/^(accessLevel|AccessLevel|access_level|level)$/';
const accessLevelComparisons = [
  `BinaryExpression[operator=/^[<>]=?$/] > MemberExpression[object.name='AccessLevel']`,
  `BinaryExpression[operator=/^[<>]=?$/] > MemberExpression[property.name=${LEVEL}]`,
  `BinaryExpression[operator=/^[<>]=?$/] > Identifier[name=${LEVEL}]`,
].map((selector) => ({
  selector,
  message: 'Roles are compared in one place: use a named ability of src/core/abilities.ts.',
}));

export default tseslint.config(
  { ignores: ['dist/', 'generated/', 'node_modules/', 'data/', 'docs/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/core/abilities.ts'],
    rules: { 'no-restricted-syntax': ['error', ...accessLevelComparisons] },
  },
);

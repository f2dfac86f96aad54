// Lint runs in `npm test`: type-checked rules for the TypeScript sources and tests, the plain
// recommended rules for the build, bench and soak scripts. Formatting is Prettier's (`npm run lint` checks it,
// `npm run format` applies it).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.test-output/', 'coverage/', 'test/fixtures/'] },
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `const { caCert: _ca, ...rest } = x` is how this code base copies an object without one key.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // An aborted wait rejects with its AbortSignal's `reason`, which the platform types as `any`.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true }],
    },
  },
);

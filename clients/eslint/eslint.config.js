// ESLint for HEMRA's web code, as ruff is for its Python: the dashboard and trace viewer
// (clients/dashboard) and the TypeScript harness client (clients/harness-ts), their sources
// and tests, never their built output. tests/test_lint.py runs it; so does `npm run lint` here.
//
// Paths are from the repository's root: with --config, ESLint matches them against the
// folder it runs in, and both ways of running it run it there.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    // Built output, and the packages' own installs.
    ignores: ['**/node_modules/**', '**/dist/**'],
  },
  {
    files: ['clients/dashboard/**/*.{js,mjs}', 'clients/harness-ts/**/*.{js,mjs}'],
    extends: [js.configs.recommended],
    rules: {
      // What the Python side asks of ruff (F, B, UP), in JavaScript's words.
      'no-var': 'error',
      'prefer-const': 'error',
      eqeqeq: ['error', 'smart'],
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['clients/harness-ts/**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    rules: {
      'no-var': 'error',
      'prefer-const': 'error',
      eqeqeq: ['error', 'smart'],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // The dashboard runs in the browser; its build file and tests, and the harness client, in node.
    files: ['clients/dashboard/src/**'],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ['clients/dashboard/test/**', 'clients/dashboard/*.js', 'clients/harness-ts/**'],
    languageOptions: { globals: globals.node },
  },
);

// npm run lint: typescript-eslint's recommended rules, sorted imports and no import cycles.
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'conformance-results/', '.scratch/', 'upstream/', 'proto/gen/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mjs', '**/*.js'],
    plugins: { 'import-x': importX, 'simple-import-sort': simpleImportSort },
    languageOptions: { globals: globals.node },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      // Kubernetes objects get kubernetes-types; what stays generic is `unknown`. A warning until the last `any` goes.
      '@typescript-eslint/no-explicit-any': 'warn',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // A variable a closure reads before its one assignment stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      'import-x/no-cycle': 'error',
      // Floors (docs/architecture.md): kube/ is the ground; agent/, proxy/, dns/ and apiserver/ stand on it and never
      // import each other; cli/ stands on them; e2e/, bench/ and scripts/ on top; testing/ serves the tests of every
      // floor.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './kube',
              from: [
                './agent',
                './proxy',
                './dns',
                './apiserver',
                './cli',
                './e2e',
                './bench',
                './scripts',
                './images',
              ],
            },
            { target: './agent', from: ['./proxy', './dns', './apiserver', './cli', './e2e', './bench', './scripts'] },
            { target: './proxy', from: ['./agent', './dns', './apiserver', './cli', './e2e', './bench', './scripts'] },
            { target: './dns', from: ['./agent', './proxy', './apiserver', './cli', './e2e', './bench', './scripts'] },
            { target: './apiserver', from: ['./agent', './proxy', './dns', './cli', './e2e', './bench', './scripts'] },
            { target: './cli', from: ['./e2e', './bench', './scripts'] },
            // Helpers for tests of every floor (polling, a dev apiserver on a free port).
            { target: './testing', from: ['./cli', './e2e', './bench', './scripts'] },
            {
              target: './images',
              from: ['./agent', './proxy', './dns', './apiserver', './cli', './e2e', './bench', './scripts'],
            },
          ],
        },
      ],
    },
  },
);

#!/usr/bin/env node
// Compiles the runtime (everything but tests, e2e and benchmarks) to plain
// JavaScript: one bundle from the CLI entry with its npm dependencies inside
// (Node's loader resolving and reading hundreds of small files was half of
// the kubelet's import time and ~10 MiB of each process), split into chunks at the dynamic
// imports so a subcommand still loads only its own code. The files the
// runtime reads (kube/assets.ts) are copied beside it at their repository
// paths. Runs as npm's `prepare` step, so `npm ci` leaves a runnable build.
//   node scripts/build.mjs [--if-stale] [outdir]     (default: dist)
// --if-stale does nothing when every source is older than the last build.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['proto', 'kube', 'agent', 'proxy', 'dns', 'apiserver', 'cli', 'images'];
// Loaded with readFileSync or proto-loader relative to the compiled module.
const ASSETS = [
  /\.proto$/,
  /^proto\/.*\.json$/,
  /^apiserver\/openapi\/schemas\.json$/,
  /^apiserver\/protobuf\/schema\.json$/,
];

function walk(dir) {
  const out = [];
  for (const e of fs.readdirSync(path.join(REPO, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'testdata' && e.name !== 'node_modules') out.push(...walk(rel));
    } else out.push(rel);
  }
  return out;
}

const args = process.argv.slice(2);
const ifStale = args.includes('--if-stale');
const out = path.resolve(args.find((a) => !a.startsWith('--')) ?? path.join(REPO, 'dist'));
const files = SOURCES.flatMap(walk);
const STAMP = path.join(out, '.built');
if (ifStale) {
  const built = fs.statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  // The bundle holds the dependencies too: a changed lock file means a rebuild.
  if (
    [...files, 'scripts/build.mjs', 'package-lock.json'].every((f) => fs.statSync(path.join(REPO, f)).mtimeMs < built)
  )
    process.exit(0);
}
const ENTRY = path.join(REPO, 'cli/tskube.ts');
// netlink is a native addon (prebuilt .node files found beside its package);
// ws's two are optional native speed-ups it loads only if installed.
const EXTERNAL = ['netlink', 'bufferutil', 'utf-8-validate'];
// Bundled CommonJS dependencies call require() for Node's built-ins.
const BANNER =
  "import { createRequire as __tskubeCreateRequire } from 'node:module'; const require = __tskubeCreateRequire(import.meta.url);";
const assets = files.filter((f) => ASSETS.some((re) => re.test(f)));

const t0 = Date.now();
fs.rmSync(out, { recursive: true, force: true });
const result = await build({
  entryPoints: [ENTRY],
  outdir: out,
  outbase: REPO,
  entryNames: '[dir]/[name]',
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  bundle: true,
  splitting: true,
  external: EXTERNAL,
  banner: { js: BANNER },
  metafile: true,
  logLevel: 'warning',
});
const outputs = Object.keys(result.metafile.outputs).length;
const inputs = Object.keys(result.metafile.inputs).length;
for (const a of assets) {
  fs.mkdirSync(path.dirname(path.join(out, a)), { recursive: true });
  fs.copyFileSync(path.join(REPO, a), path.join(out, a));
}
fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
process.stdout.write(
  `build: ${inputs} modules in ${outputs} files and ${assets.length} schemas to ${path.relative(process.cwd(), out) || '.'} in ${Date.now() - t0} ms\n`,
);

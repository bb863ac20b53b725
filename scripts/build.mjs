#!/usr/bin/env node
// Compiles the runtime (everything but tests, e2e and benchmarks) to plain
// JavaScript, one output file per source file so dynamic imports stay lazy,
// and copies the schemas it loads at run time next to it. Runs as npm's
// `prepare` step, so `npm ci` leaves a runnable build in dist/.
//   node scripts/build.mjs [--if-stale] [outdir]     (default: dist)
// --if-stale does nothing when every source is older than the last build.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['proto', 'kube', 'agent', 'proxy', 'dns', 'apiserver', 'cli', 'images'];
// Loaded with readFileSync or proto-loader relative to the compiled module.
const ASSETS = [/\.proto$/, /^apiserver\/openapi\/schemas\.json$/, /^apiserver\/protobuf\/schema\.json$/];

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
  if (files.every((f) => fs.statSync(path.join(REPO, f)).mtimeMs < built)) process.exit(0);
}
const entryPoints = files.filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts')).map((f) => path.join(REPO, f));
const assets = files.filter((f) => ASSETS.some((re) => re.test(f)));

const t0 = Date.now();
fs.rmSync(out, { recursive: true, force: true });
await build({ entryPoints, outdir: out, outbase: REPO, format: 'esm', platform: 'node', target: 'node20', bundle: false, logLevel: 'warning' });
for (const a of assets) {
  fs.mkdirSync(path.dirname(path.join(out, a)), { recursive: true });
  fs.copyFileSync(path.join(REPO, a), path.join(out, a));
}
fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
process.stdout.write(`build: ${entryPoints.length} modules and ${assets.length} schemas to ${path.relative(process.cwd(), out) || '.'} in ${Date.now() - t0} ms\n`);

#!/usr/bin/env node
// npm bin entry: runs the compiled CLI (dist/, made by `npm ci` or `npm run build`).
import fs from 'node:fs';

const entry = new URL('../dist/cli/tskube.js', import.meta.url);
if (!fs.existsSync(entry)) {
  process.stderr.write(
    `tskube: no compiled build at ${entry.pathname}; run \`npm ci\` or \`npm run build\` in the checkout\n`,
  );
  process.exit(1);
}
await import(entry.href);

// Files the runtime reads (proto definitions, JSON schemas) keep their
// repository paths both in the checkout and in the compiled build (dist/).
// The build bundles modules into shared chunks, so a module no longer knows
// where its source sat: look upward from here for the first directory that
// has the file — dist/ for the build, the checkout for the sources.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The absolute path of a runtime asset given by its repository path (e.g. `proto/cri/api.proto`). */
export function assetPath(rel: string, from = HERE): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const p = path.join(dir, rel);
    if (fs.existsSync(p)) return p;
    if (path.dirname(dir) === dir)
      throw new Error(
        `runtime asset ${rel} not found in ${from} or any parent directory (a broken install: rerun \`npm ci\` or scripts/install.sh)`,
      );
  }
}

// The demo images (tskube/pause, the sandbox image, and tskube/app) built
// from the local busybox and pushed to the node's registry unless it has them
// already: `tskube up` does it at start, `tskube images` (the
// tskube-images unit) on a node installed with systemd. Nothing is pulled.
import { buildImage, IMAGES, pushImage } from '../images/build.js';
import { parseFlags } from './flags.js';
import { httpOk, until } from './node-runner.js';

export async function ensureDemoImages(registry: string, workDir: string, note: (s: string) => void): Promise<void> {
  for (const spec of IMAGES) {
    const ref = `${registry}/${spec.name}:${spec.tag}`;
    const have = await fetch(`http://${registry}/v2/${spec.name}/manifests/${spec.tag}`, {
      method: 'HEAD',
      headers: { Accept: 'application/vnd.oci.image.manifest.v1+json' },
      signal: AbortSignal.timeout(2000),
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (have) {
      note(`${ref}: present`);
      continue;
    }
    const t0 = Date.now();
    pushImage(buildImage(spec, workDir), registry);
    note(`${ref}: built and pushed (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
  }
}

export const IMAGES_FLAGS: Record<string, string> = {
  registry: 'the registry to push to (plain HTTP). Default 127.0.0.1:5000',
  'work-dir': 'where the image layouts are built. Default /var/lib/tskube/images',
};

/** `tskube images`: waits up to a minute for the registry, then builds and pushes what it lacks. */
export async function runImages(argv: string[]): Promise<void> {
  const f = parseFlags(argv, IMAGES_FLAGS);
  const registry = f.get('registry') ?? '127.0.0.1:5000';
  await until(`the registry on http://${registry}/v2/ (is tskube-registry running?)`, 60_000, () =>
    httpOk(`http://${registry}/v2/`),
  );
  await ensureDemoImages(registry, f.get('work-dir') ?? '/var/lib/tskube/images', (s) =>
    process.stdout.write(`${s}\n`),
  );
}

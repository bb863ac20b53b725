// V8 grows the young generation's semispaces from 1 MiB towards 16 MiB when
// scavenges find survivors; for the kubelet and `tskube up` that kept 8–27 MiB
// of RSS per process. A growth factor of 1 keeps them at their initial size
// (unlike --max-semi-space-size it takes effect at run time), for ~15 % more
// CPU per pod started: more objects are promoted, then marked (bench:footprint).
// `tskube proxy`, `join` and `apiserver` keep V8's default: with 1 MiB
// semispaces the proxy's syncs at 10,000 Services cost twice the CPU
// (bench:proxy-sync); `up` serves a one-machine cluster, not 10,000 Services.
import v8 from 'node:v8';

export const SMALL_YOUNG_GENERATION = '--semi-space-growth-factor=1';

/** The V8 flag to set, or null when the user sized the young generation already (NODE_OPTIONS or node's own flags). */
export function youngGenerationFlag(nodeOptions: string, execArgv: readonly string[]): string | null {
  const given = [...nodeOptions.split(/\s+/), ...execArgv];
  return given.some((a) => /^--(max-|min-)?semi[-_]space[-_]/.test(a)) ? null : SMALL_YOUNG_GENERATION;
}

export function keepYoungGenerationSmall(): void {
  const flag = youngGenerationFlag(process.env.NODE_OPTIONS ?? '', process.execArgv);
  if (flag) v8.setFlagsFromString(flag);
}

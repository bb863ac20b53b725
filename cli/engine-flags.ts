// V8 settings a subcommand starts with, each a measured trade (bench:footprint):
// - A small young generation: V8 grows the semispaces from 1 MiB towards
//   16 MiB when scavenges find survivors; for the kubelet and `tskube up` that
//   kept 8–27 MiB of RSS per process. A growth factor of 1 keeps them at their
//   initial size (unlike --max-semi-space-size it takes effect at run time),
//   for ~15 % more CPU per pod started (more objects promoted, then marked).
// - The baseline compiler as the top tier (--max-opt=1: Ignition and
//   Sparkplug, no TurboFan): the kubelet's work comes in short bursts of many
//   different functions (a pod's sync), which TurboFan compiled on a
//   background thread for more CPU than the optimized code saved, and its
//   code and zones cost ~5 MiB of RSS (two A/B runs: idle 56–60 vs 63–65 MiB,
//   CPU per pod started 41–46 vs 47–52 ms; steady probing costs more CPU).
// `tskube proxy`, `join` and `apiserver` keep V8's defaults: the proxy's syncs
// at 10,000 Services are hot loops that need TurboFan and cost twice the CPU
// with 1 MiB semispaces. `up` (a one-machine cluster, not 10,000 Services)
// keeps the small young generation but not the baseline tier: without
// TurboFan its apiserver started ~30 % slower and `up` ~1.5 s later.
import v8 from 'node:v8';

export const SMALL_YOUNG_GENERATION = '--semi-space-growth-factor=1';
export const BASELINE_TOP_TIER = '--max-opt=1';

export interface EngineSettings {
  smallYoungGeneration?: true;
  baselineTopTier?: true;
}

/** What `tskube agent` runs with (and bench:probes' kubelet, to measure the same). */
export const KUBELET_ENGINE: EngineSettings = { smallYoungGeneration: true, baselineTopTier: true };

/** Each setting's flag, and the user's flags (NODE_OPTIONS or node's own) that decide the same thing: theirs apply. */
const SETTINGS: { key: keyof EngineSettings; flag: string; userDecides: RegExp }[] = [
  { key: 'smallYoungGeneration', flag: SMALL_YOUNG_GENERATION, userDecides: /^--(max-|min-)?semi[-_]space[-_]/ },
  {
    key: 'baselineTopTier',
    flag: BASELINE_TOP_TIER,
    userDecides: /^--(no-)?(max[-_]opt|opt|turbofan|maglev|sparkplug|lite[-_]mode|jitless)(=|$)/,
  },
];

/** The V8 flags to set for a subcommand, leaving out those the user already decided. */
export function engineFlags(settings: EngineSettings, nodeOptions: string, execArgv: readonly string[]): string[] {
  const given = [...nodeOptions.split(/\s+/), ...execArgv];
  return SETTINGS.filter((s) => settings[s.key] && !given.some((a) => s.userDecides.test(a))).map((s) => s.flag);
}

export function applyEngineSettings(settings: EngineSettings): void {
  for (const flag of engineFlags(settings, process.env.NODE_OPTIONS ?? '', process.execArgv))
    v8.setFlagsFromString(flag);
}

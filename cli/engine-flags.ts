// V8 settings a subcommand starts with, each a trade measured by bench:footprint (figures in docs/benchmarks.md,
// "Engine settings"):
// - A small young generation (semispace growth factor 1): V8 would grow the semispaces when scavenges find
//   survivors, which keeps megabytes of RSS per process; fixed at their initial size they cost some CPU per pod.
// - The baseline compiler as the top tier (--max-opt=1: no TurboFan): the kubelet's work comes in short bursts of many
//   different functions (a pod's sync), for which TurboFan's background compiles cost more CPU and memory than the
//   optimized code saves.
// `tskube proxy`, `join` and `apiserver` keep V8's defaults: the proxy's syncs at many Services are hot loops that need
// TurboFan and large semispaces. `up` keeps the small young generation but not the baseline tier: its apiserver needs
// TurboFan to start quickly.
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

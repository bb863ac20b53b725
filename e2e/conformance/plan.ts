// What a conformance run is: the e2e suite's passes (parallel, then serial) as ginkgo
// command lines, the image repository list pointing every registry at the local one,
// and the results read back from ginkgo's JSON reports as one line and a JUnit file.
// Pure; run.ts executes it.

export type ControlPlane = 'upstream' | 'tskube';

export interface RunOptions {
  controlPlane: ControlPlane;
  /** Regular expression on test names (ginkgo --focus). */
  focus: string;
  /** Regular expression on test names never run (ginkgo --skip); empty for none. */
  skip: string;
  /** Processes of the parallel pass. */
  parallel: number;
  /** Where reports go. */
  reportDir: string;
}

export const DEFAULT_FOCUS = String.raw`\[NodeConformance\]|\[Conformance\]`;

export const FLAGS: Record<string, string> = {
  'control-plane':
    "upstream (the fixtures' kube-apiserver, etcd, controller manager and scheduler) or tskube (tskube up)",
  focus: `a regular expression on test names; default ${DEFAULT_FOCUS}`,
  skip: 'a regular expression on test names not to run',
  parallel: 'processes of the parallel pass; default 4',
  'report-dir': 'where the reports go; default ./conformance-results/<control plane>',
};

/** The runner's options from its parsed flags, or an error naming the bad one. */
export function runOptions(f: Map<string, string>): RunOptions {
  const controlPlane = f.get('control-plane') ?? 'upstream';
  if (controlPlane !== 'upstream' && controlPlane !== 'tskube')
    throw new Error(`--control-plane: must be upstream or tskube, not "${controlPlane}"`);
  const parallel = Number(f.get('parallel') ?? '4');
  if (!Number.isInteger(parallel) || parallel < 1)
    throw new Error(`--parallel: must be a positive integer, not "${f.get('parallel')}"`);
  for (const flag of ['focus', 'skip']) {
    const v = f.get(flag);
    if (v === undefined) continue;
    try {
      new RegExp(v);
    } catch (e) {
      throw new Error(`--${flag}: ${(e as Error).message}`, { cause: e });
    }
  }
  return {
    controlPlane,
    focus: f.get('focus') ?? DEFAULT_FOCUS,
    skip: f.get('skip') ?? '',
    parallel,
    reportDir: f.get('report-dir') ?? `conformance-results/${controlPlane}`,
  };
}

/** Labels no pass runs: tests that break the cluster on purpose, or are known to flake upstream. */
const NEVER = '!Disruptive && !Flaky';

export interface Pass {
  name: 'parallel' | 'serial';
  procs: number;
  labelFilter: string;
}

/** The parallel pass skips [Serial] tests; the serial pass runs them, one at a time, after it. */
export const passes = (o: RunOptions): Pass[] => [
  { name: 'parallel', procs: o.parallel, labelFilter: `!Serial && ${NEVER}` },
  { name: 'serial', procs: 1, labelFilter: `Serial && ${NEVER}` },
];

/** KUBE_TEST_REPO_LIST's content: each of the suite's registries under `registry` (the invalid one stays unreachable). */
export function repoList(registry: string): string {
  const entries: Record<string, string> = {
    promoterE2eRegistry: `${registry}/e2e-test-images`,
    buildImageRegistry: `${registry}/build-image`,
    invalidRegistry: `${registry}/invalid`,
    gcEtcdRegistry: registry,
    gcRegistry: registry,
    sigStorageRegistry: `${registry}/sig-storage`,
    privateRegistry: `${registry}/k8s-authenticated-test`,
    dockerLibraryRegistry: `${registry}/library`,
    cloudProviderGcpRegistry: `${registry}/cloud-provider-gcp`,
  };
  return Object.entries(entries)
    .map(([k, v]) => `${k}: ${v}\n`)
    .join('');
}

export interface PassPaths {
  e2eTest: string;
  kubeconfig: string;
  kubectl: string;
}

/** ginkgo's arguments for one pass: its own flags, the test binary, then the suite's. */
export function ginkgoArgs(pass: Pass, o: RunOptions, p: PassPaths): string[] {
  return [
    `--procs=${pass.procs}`,
    '--no-color',
    '--timeout=24h',
    `--focus=${o.focus}`,
    ...(o.skip ? [`--skip=${o.skip}`] : []),
    `--label-filter=${pass.labelFilter}`,
    `--json-report=${pass.name}.json`,
    `--output-dir=${o.reportDir}`,
    p.e2eTest,
    '--',
    '--provider=skeleton',
    `--kubeconfig=${p.kubeconfig}`,
    `--kubectl-path=${p.kubectl}`,
    `--report-dir=${o.reportDir}`,
    `--report-prefix=${pass.name}`,
  ];
}

/** The parts of ginkgo's JSON report read here (types.Report, types.SpecReport). */
export interface GinkgoReport {
  SpecReports?: {
    ContainerHierarchyTexts?: string[] | null;
    LeafNodeText?: string;
    LeafNodeType?: string;
    State?: string;
    RunTime?: number;
    Failure?: { Message?: string; Location?: { FileName?: string; LineNumber?: number } };
  }[];
}

export type Outcome = 'passed' | 'failed' | 'skipped';

export interface SpecResult {
  name: string;
  outcome: Outcome;
  seconds: number;
  /** Why it failed, or why the test skipped itself. */
  message?: string;
  /** A failed set-up or tear-down of the suite (BeforeSuite, AfterSuite …), not a test. */
  suiteNode?: true;
}

const outcomeOf = (state: string | undefined): Outcome =>
  state === 'passed' ? 'passed' : state === 'skipped' || state === 'pending' ? 'skipped' : 'failed';

/** Each test (It) of the reports, with the suite's own set-up and tear-down failures as tests of their own. */
export function specResults(reports: GinkgoReport[]): SpecResult[] {
  const out: SpecResult[] = [];
  for (const r of reports) {
    for (const s of r.SpecReports ?? []) {
      const setup = s.LeafNodeType !== 'It';
      // Suite nodes that passed are not tests; one that failed fails the pass and is reported as such.
      if (setup && s.State === 'passed') continue;
      const name = setup
        ? `[${s.LeafNodeType}]`
        : [...(s.ContainerHierarchyTexts ?? []), s.LeafNodeText ?? ''].join(' ');
      const outcome = outcomeOf(s.State);
      const where = s.Failure?.Location?.FileName
        ? ` (${s.Failure.Location.FileName}:${s.Failure.Location.LineNumber ?? 0})`
        : '';
      const message = s.Failure?.Message ? `${s.Failure.Message}${outcome === 'failed' ? where : ''}` : undefined;
      out.push({
        name,
        outcome,
        seconds: (s.RunTime ?? 0) / 1e9,
        ...(message ? { message } : {}),
        ...(setup ? { suiteNode: true as const } : {}),
      });
    }
  }
  return out;
}

/**
 * One result per test over all passes: a pass that ran it (passed or failed, or skipped by the test itself with a
 * reason) wins over one that left it out.
 */
export function mergePasses(passResults: SpecResult[][]): SpecResult[] {
  const byName = new Map<string, SpecResult>();
  const ran = (r: SpecResult): boolean => r.outcome !== 'skipped' || r.message !== undefined;
  for (const results of passResults) {
    for (const r of results) {
      const had = byName.get(r.name);
      if (!had || (!ran(had) && ran(r))) byName.set(r.name, r);
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The results the run was asked for: names matching the focus and not the skip expression (ginkgo matches them
 * against the same text). The reports list every test of the suite, the rest as skipped.
 */
export function inScope(results: SpecResult[], o: Pick<RunOptions, 'focus' | 'skip'>): SpecResult[] {
  const focus = new RegExp(o.focus);
  const skip = o.skip ? new RegExp(o.skip) : undefined;
  return results.filter((r) => r.suiteNode || (focus.test(r.name) && !skip?.test(r.name)));
}

export function summaryLine(results: SpecResult[], controlPlane: ControlPlane, release: string): string {
  const n = (o: Outcome): number => results.filter((r) => r.outcome === o).length;
  return `conformance: ${n('passed')} passed, ${n('failed')} failed, ${n('skipped')} skipped of ${results.length} (control plane: ${controlPlane}, e2e ${release})`;
}

const xml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A JUnit file of the merged results. */
export function junit(results: SpecResult[], suite: string): string {
  const n = (o: Outcome): number => results.filter((r) => r.outcome === o).length;
  const total = results.reduce((t, r) => t + r.seconds, 0);
  const cases = results.map((r) => {
    const open = `  <testcase name="${xml(r.name)}" classname="${xml(suite)}" time="${r.seconds.toFixed(3)}"`;
    if (r.outcome === 'passed') return `${open}/>`;
    const body =
      r.outcome === 'failed'
        ? `<failure message="${xml((r.message ?? '').split('\n')[0] ?? '')}">${xml(r.message ?? '')}</failure>`
        : `<skipped message="${xml(r.message ?? 'not run')}"/>`;
    return `${open}>${body}</testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuite name="${xml(suite)}" tests="${results.length}" failures="${n('failed')}" skipped="${n('skipped')}" time="${total.toFixed(3)}">`,
    ...cases,
    '</testsuite>',
    '',
  ].join('\n');
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

/**
 * The results as a Markdown table (test, result, seconds, and a failure's first line), failures first, then the rest
 * by name; tests the suite skipped without running are counted, not listed.
 */
export function resultsTable(results: SpecResult[]): string {
  const ran = results.filter((r) => r.outcome !== 'skipped' || r.message);
  const order = (r: SpecResult): number => (r.outcome === 'failed' ? 0 : r.outcome === 'passed' ? 1 : 2);
  const rows = [...ran]
    .sort((a, b) => order(a) - order(b) || a.name.localeCompare(b.name))
    .map(
      (r) =>
        `| ${cell(r.name)} | ${r.outcome} | ${r.seconds.toFixed(1)} | ${r.outcome === 'passed' ? '' : cell((r.message ?? '').split('\n')[0] ?? '').slice(0, 200)} |`,
    );
  const notRun = results.length - ran.length;
  return [
    '| Test | Result | Seconds | Why |',
    '|---|---|---|---|',
    ...rows,
    '',
    `${notRun} more in scope were not run (skipped by the suite for this cluster, or not reached).`,
    '',
  ].join('\n');
}

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  DEFAULT_FOCUS,
  ginkgoArgs,
  type GinkgoReport,
  inScope,
  junit,
  mergePasses,
  passes,
  repoList,
  resultsTable,
  runOptions,
  type SpecResult,
  specResults,
  summaryLine,
} from './plan.js';

const flags = (o: Record<string, string>): Map<string, string> => new Map(Object.entries(o));

test('runOptions: defaults, and a clear error per bad flag', () => {
  assert.deepEqual(runOptions(flags({})), {
    controlPlane: 'upstream',
    focus: DEFAULT_FOCUS,
    skip: '',
    parallel: 4,
    reportDir: 'conformance-results/upstream',
  });
  assert.equal(runOptions(flags({ 'control-plane': 'tskube', parallel: '2' })).reportDir, 'conformance-results/tskube');
  assert.throws(
    () => runOptions(flags({ 'control-plane': 'gke' })),
    /--control-plane: must be upstream or tskube, not "gke"/,
  );
  assert.throws(() => runOptions(flags({ parallel: '0' })), /--parallel: must be a positive integer, not "0"/);
  assert.throws(() => runOptions(flags({ focus: '[unclosed' })), /^Error: --focus: /);
});

test('passes: [Serial] tests only in the second pass, one process; Disruptive and Flaky in neither', () => {
  const [parallel, serial] = passes(runOptions(flags({ parallel: '3' })));
  assert.deepEqual(parallel, { name: 'parallel', procs: 3, labelFilter: '!Serial && !Disruptive && !Flaky' });
  assert.deepEqual(serial, { name: 'serial', procs: 1, labelFilter: 'Serial && !Disruptive && !Flaky' });
});

test("ginkgoArgs: ginkgo's flags, the binary, then the suite's own after --", () => {
  const o = runOptions(flags({ skip: 'Slow', 'report-dir': '/r' }));
  const args = ginkgoArgs(passes(o)[0]!, o, { e2eTest: '/f/e2e.test', kubeconfig: '/k', kubectl: '/f/kubectl' });
  const dash = args.indexOf('--');
  assert.equal(args[dash - 1], '/f/e2e.test');
  assert.ok(args.slice(0, dash).includes(`--focus=${DEFAULT_FOCUS}`));
  assert.ok(args.slice(0, dash).includes('--skip=Slow'));
  assert.ok(args.slice(0, dash).includes('--json-report=parallel.json'));
  assert.deepEqual(args.slice(dash + 1), [
    '--provider=skeleton',
    '--kubeconfig=/k',
    '--kubectl-path=/f/kubectl',
    '--report-dir=/r',
    '--report-prefix=parallel',
  ]);
  assert.ok(
    !ginkgoArgs(passes(runOptions(flags({})))[0]!, runOptions(flags({})), {
      e2eTest: 'e',
      kubeconfig: 'k',
      kubectl: 'c',
    }).some((a) => a.startsWith('--skip=')),
  );
});

test('repoList: every registry of the suite under the local one', () => {
  const yaml = repoList('127.0.0.1:5000');
  assert.match(yaml, /^promoterE2eRegistry: 127\.0\.0\.1:5000\/e2e-test-images$/m);
  assert.match(yaml, /^gcRegistry: 127\.0\.0\.1:5000$/m);
  assert.match(yaml, /^invalidRegistry: 127\.0\.0\.1:5000\/invalid$/m);
  assert.equal(yaml.trim().split('\n').length, 9);
  assert.doesNotMatch(yaml, /registry\.k8s\.io|gcr\.io|docker\.io/);
});

const report: GinkgoReport[] = [
  {
    SpecReports: [
      { LeafNodeType: 'SynchronizedBeforeSuite', State: 'passed', RunTime: 5e9 },
      {
        ContainerHierarchyTexts: ['[sig-node] Pods'],
        LeafNodeText: 'should get a host IP [Conformance]',
        LeafNodeType: 'It',
        State: 'passed',
        RunTime: 2_500_000_000,
      },
      {
        ContainerHierarchyTexts: ['[sig-node] Probing'],
        LeafNodeText: 'should restart [NodeConformance]',
        LeafNodeType: 'It',
        State: 'failed',
        RunTime: 60e9,
        Failure: { Message: 'timed out\nwaiting', Location: { FileName: 'probe.go', LineNumber: 12 } },
      },
      {
        ContainerHierarchyTexts: ['[sig-node] Serial'],
        LeafNodeText: 'does things [Serial] [Conformance]',
        LeafNodeType: 'It',
        State: 'skipped',
        RunTime: 0,
      },
      {
        ContainerHierarchyTexts: ['[sig-cloud] GCE'],
        LeafNodeText: 'disks [Conformance]',
        LeafNodeType: 'It',
        State: 'skipped',
        Failure: { Message: 'Only supported for providers [gce]' },
      },
      {
        ContainerHierarchyTexts: ['[sig-apps] Other'],
        LeafNodeText: 'not focused',
        LeafNodeType: 'It',
        State: 'skipped',
      },
      { LeafNodeType: 'SynchronizedAfterSuite', State: 'timedout', RunTime: 1e9, Failure: { Message: 'cleanup hung' } },
    ],
  },
];

test('specResults: tests with outcome, seconds and why; a failed suite node counts, a passed one does not', () => {
  const r = specResults(report);
  assert.deepEqual(
    r.map((x) => [x.name, x.outcome, x.seconds]),
    [
      ['[sig-node] Pods should get a host IP [Conformance]', 'passed', 2.5],
      ['[sig-node] Probing should restart [NodeConformance]', 'failed', 60],
      ['[sig-node] Serial does things [Serial] [Conformance]', 'skipped', 0],
      ['[sig-cloud] GCE disks [Conformance]', 'skipped', 0],
      ['[sig-apps] Other not focused', 'skipped', 0],
      ['[SynchronizedAfterSuite]', 'failed', 1],
    ],
  );
  assert.equal(r[1]!.message, 'timed out\nwaiting (probe.go:12)');
  assert.equal(r[3]!.message, 'Only supported for providers [gce]');
  assert.equal(r[5]!.suiteNode, true);
});

test('mergePasses and inScope: the pass that ran a test wins; tests outside the focus are not counted', () => {
  const parallel = specResults(report);
  const serial: SpecResult[] = [
    { name: '[sig-node] Serial does things [Serial] [Conformance]', outcome: 'passed', seconds: 30 },
    { name: '[sig-node] Pods should get a host IP [Conformance]', outcome: 'skipped', seconds: 0 },
  ];
  const merged = inScope(mergePasses([parallel, serial]), { focus: DEFAULT_FOCUS, skip: '' });
  assert.deepEqual(
    merged.map((r) => `${r.outcome} ${r.name}`),
    [
      'skipped [sig-cloud] GCE disks [Conformance]',
      'passed [sig-node] Pods should get a host IP [Conformance]',
      'failed [sig-node] Probing should restart [NodeConformance]',
      'passed [sig-node] Serial does things [Serial] [Conformance]',
      'failed [SynchronizedAfterSuite]',
    ],
  );
  assert.equal(
    summaryLine(merged, 'upstream', 'v1.37.2'),
    'conformance: 2 passed, 2 failed, 1 skipped of 5 (control plane: upstream, e2e v1.37.2)',
  );
  assert.equal(inScope(merged, { focus: DEFAULT_FOCUS, skip: 'Probing' }).length, 4);
});

test('junit: one testcase per test, failures and skips with their messages, XML-escaped', () => {
  const xml = junit(
    [
      { name: 'a <b> & "c"', outcome: 'failed', seconds: 1.5, message: 'x < y\nmore' },
      { name: 'ok', outcome: 'passed', seconds: 2 },
      { name: 'gce', outcome: 'skipped', seconds: 0, message: 'Only [gce]' },
    ],
    'conformance',
  );
  assert.match(xml, /<testsuite name="conformance" tests="3" failures="1" skipped="1" time="3\.500">/);
  assert.match(
    xml,
    /<testcase name="a &lt;b&gt; &amp; &quot;c&quot;" classname="conformance" time="1\.500"><failure message="x &lt; y">x &lt; y\nmore<\/failure><\/testcase>/,
  );
  assert.match(xml, /<testcase name="ok" classname="conformance" time="2\.000"\/>/);
  assert.match(xml, /<skipped message="Only \[gce\]"\/>/);
});

test('resultsTable: failures first with their first line, then passes; tests never run are only counted', () => {
  const table = resultsTable([
    { name: 'b passes', outcome: 'passed', seconds: 2 },
    { name: 'a | fails', outcome: 'failed', seconds: 1.25, message: 'Timed out\nmore' },
    { name: 'c not run', outcome: 'skipped', seconds: 0 },
    { name: 'd skipped itself', outcome: 'skipped', seconds: 0.1, message: 'needs IPv6' },
  ]);
  assert.deepEqual(table.split('\n').slice(0, 5), [
    '| Test | Result | Seconds | Why |',
    '|---|---|---|---|',
    '| a \\| fails | failed | 1.3 | Timed out |',
    '| b passes | passed | 2.0 |  |',
    '| d skipped itself | skipped | 0.1 | needs IPv6 |',
  ]);
  assert.match(table, /^1 more in scope were not run/m);
});

// npm run conformance -- [--control-plane=upstream|tskube] [--focus=…] [--skip=…] [--parallel=N] [--report-dir=…]
// Starts a cluster in netns VMs (a control plane and two tskube nodes), runs upstream's
// e2e suite against it with ginkgo (a parallel pass, then the [Serial] tests), and
// writes a JUnit file, the results as JSON, and one summary line.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { parseFlags } from '../../cli/flags.js';
import { KUBERNETES_VERSION } from '../../scripts/upstream-plan.js';
import { REPO } from '../harness.js';
import { waitFor } from '../proc.js';
import { joinArgs, joinLine, routePodNetworks, startUpstreamControlPlane, tokenCreate } from '../upstream-cluster.js';
import { upstreamBin, upstreamSkip } from '../upstream-control-plane.js';
import { Lan, type Vm } from '../vms.js';
import {
  FLAGS,
  ginkgoArgs,
  type GinkgoReport,
  inScope,
  junit,
  mergePasses,
  passes,
  repoList,
  resultsTable,
  type RunOptions,
  runOptions,
  type SpecResult,
  specResults,
  summaryLine,
} from './plan.js';

const REGISTRY = '127.0.0.1:5000';

export interface Cluster {
  /** Where e2e.test runs: the control plane's VM. */
  vm: Vm;
  kubeconfig: string;
  nodes: number;
}

const minutes = (since: number): string => `${((Date.now() - since) / 60_000).toFixed(1)} min`;

/** The real control plane on VM 1, two tskube nodes joined to it. */
async function upstreamCluster(lan: Lan): Promise<Cluster> {
  const { vm, cp } = await startUpstreamControlPlane(lan, { upstreamImages: true, proxy: true });
  const join = joinArgs(joinLine(tokenCreate(cp)));
  const workers = [await lan.vm('vm-2', '192.0.2.2'), await lan.vm('vm-3', '192.0.2.3')];
  await Promise.all(workers.map((w) => w.run(join, /This node has joined the cluster/)));
  return { vm, kubeconfig: cp.adminConf, nodes: 2 };
}

/** `tskube up` on VM 1 (a node itself), two more nodes joined to it; the fixtures' images in its registry. */
async function tskubeCluster(lan: Lan): Promise<Cluster> {
  const vm = await lan.vm('vm-1', '192.0.2.1');
  const join = joinArgs(
    joinLine(await vm.run(['up'], /tskube join \S+ --token \S+ --discovery-token-ca-cert-hash \S+/)),
  );
  vm.exec(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(REPO, 'scripts/upstream.ts'),
      'images',
      `--registry=${REGISTRY}`,
      `--work-dir=${path.join(vm.dir, 'upstream-images')}`,
    ],
    { timeoutMs: 300_000 },
  );
  const workers = [await lan.vm('vm-2', '192.0.2.2'), await lan.vm('vm-3', '192.0.2.3')];
  await Promise.all(workers.map((w) => w.run(join, /This node has joined the cluster/)));
  return { vm, kubeconfig: path.join(vm.dir, 'pki/admin.kubeconfig'), nodes: 3 };
}

/** Runs ginkgo in the VM; its output goes to `log`. Resolves with its exit code; `running` gets the process. */
function runGinkgo(
  vm: Vm,
  args: string[],
  env: NodeJS.ProcessEnv,
  log: string,
  running: (child: ReturnType<typeof spawn>) => void,
): Promise<number | null> {
  const out = fs.openSync(log, 'w');
  const child = spawn('nsenter', [`--net=/run/netns/${vm.netns}`, upstreamBin('ginkgo'), ...args], {
    stdio: ['ignore', out, out],
    env: { ...process.env, ...env },
    cwd: path.dirname(log),
    // Its own process group: a terminal's Ctrl-C reaches the runner only, which passes it on once.
    detached: true,
  });
  vm.extraPids.push(child.pid!);
  vm.record();
  running(child);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      fs.closeSync(out);
      resolve(code);
    });
  });
}

function readReport(file: string): GinkgoReport[] {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as GinkgoReport[];
  } catch {
    return [];
  }
}

/** Starts the cluster, runs both passes, writes the reports; returns the merged results. */
export async function runConformance(o: RunOptions): Promise<SpecResult[]> {
  upstreamSkip([
    'e2e.test',
    'ginkgo',
    'kubectl',
    'agnhost',
    ...(o.controlPlane === 'upstream'
      ? ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubeadm']
      : []),
  ]);
  const reportDir = path.resolve(o.reportDir);
  fs.mkdirSync(reportDir, { recursive: true });
  const lan = new Lan();
  const started = Date.now();
  // Ctrl-C or a kill: ginkgo ends the running tests and writes its report, no further pass starts, the results so far
  // are written and the VMs removed. Before the tests start there is only the cluster to remove.
  let ginkgo: ReturnType<typeof spawn> | undefined;
  let interrupted = false;
  const stop = (signal: NodeJS.Signals): void => {
    interrupted = true;
    if (ginkgo && ginkgo.exitCode === null) {
      console.error(`conformance: ${signal}, stopping the tests; the results so far follow`);
      // The whole group: ginkgo's test processes handle the interrupt themselves, as after a terminal's Ctrl-C.
      process.kill(-ginkgo.pid!, 'SIGINT');
      return;
    }
    console.error(`conformance: ${signal}, removing the cluster`);
    void lan.cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    await lan.create();
    const cluster = o.controlPlane === 'upstream' ? await upstreamCluster(lan) : await tskubeCluster(lan);
    const kubectl = (args: string[]): string =>
      cluster.vm.exec(upstreamBin('kubectl'), [`--kubeconfig=${cluster.kubeconfig}`, ...args]);
    await waitFor(
      () =>
        (
          kubectl([
            'get',
            'nodes',
            '-o',
            'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
          ]).match(/True/g) ?? []
        ).length === cluster.nodes,
      180_000,
      1000,
      `${cluster.nodes} nodes Ready`,
    );
    if (o.controlPlane === 'upstream') routePodNetworks(cluster.vm, kubectl);
    console.log(
      `conformance: cluster up (control plane: ${o.controlPlane}, ${cluster.nodes} nodes) in ${minutes(started)}`,
    );
    const repoListFile = path.join(reportDir, 'repo-list.yaml');
    fs.writeFileSync(repoListFile, repoList(REGISTRY));
    const results: SpecResult[][] = [];
    for (const pass of passes(o)) {
      if (interrupted) break;
      const passStarted = Date.now();
      const args = ginkgoArgs(pass, o, {
        e2eTest: upstreamBin('e2e.test'),
        kubeconfig: cluster.kubeconfig,
        kubectl: upstreamBin('kubectl'),
      });
      const code = await runGinkgo(
        cluster.vm,
        args,
        { KUBE_TEST_REPO_LIST: repoListFile },
        path.join(reportDir, `${pass.name}.log`),
        (child) => (ginkgo = child),
      );
      const passResults = specResults(readReport(path.join(reportDir, `${pass.name}.json`)));
      results.push(passResults);
      const ran = passResults.filter((r) => r.outcome !== 'skipped' || r.message);
      console.log(
        `conformance: ${pass.name} pass ran ${ran.length} tests in ${minutes(passStarted)} (ginkgo exit ${code}; log ${path.join(reportDir, `${pass.name}.log`)})`,
      );
    }
    const merged = inScope(mergePasses(results), o);
    fs.writeFileSync(
      path.join(reportDir, 'junit.xml'),
      junit(merged, `conformance (control plane: ${o.controlPlane})`),
    );
    fs.writeFileSync(path.join(reportDir, 'results.json'), `${JSON.stringify(merged, null, 1)}\n`);
    fs.writeFileSync(path.join(reportDir, 'results.md'), resultsTable(merged));
    console.log(`conformance: whole run ${minutes(started)}; reports in ${reportDir}`);
    return merged;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await lan.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  (async () => {
    const o = runOptions(parseFlags(process.argv.slice(2), FLAGS));
    const results = await runConformance(o);
    for (const r of results.filter((x) => x.outcome === 'failed'))
      console.log(`FAILED ${r.name}\n  ${(r.message ?? '').split('\n')[0]}`);
    console.log(summaryLine(results, o.controlPlane, KUBERNETES_VERSION));
    process.exit(results.some((r) => r.outcome === 'failed') ? 1 : 0);
  })().catch((e: Error) => {
    console.error(`conformance: ${e.message}`);
    process.exit(2);
  });
}

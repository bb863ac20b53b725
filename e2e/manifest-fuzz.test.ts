// e2e: a manifest fuzz. Beside 3 good static pods, 230-odd bad or
// odd manifests (e2e/manifest-fuzz-cases.ts) are dropped into the manifest
// directory in a batch, one by one, and as partial writes. The kubelet never
// exits and its /healthz stays ok; the good pods keep their containers; every
// file either runs as a pod or is reported with its name, never both; the odd
// valid ones run; once the files go, nothing of theirs is left running or
// mounted, and nothing outside the kubelet's root was created.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { L_POD_NAME } from '../agent/pods/labels.js';
import { APP_IMAGE, e2eSkipReason, REPO, sweepStale, TestNode, writeManifestAtomic } from './harness.js';
import { fuzzCases } from './manifest-fuzz-cases.js';
import { alive, waitFor } from './proc.js';

const skip = e2eSkipReason();
const GOOD = ['good-a', 'good-b', 'good-c'];

describe('manifest fuzz: bad files never crash, freeze or restart anything', { skip, timeout: 15 * 60_000 }, () => {
  let node: TestNode;
  before(async () => {
    await sweepStale();
    node = new TestNode('node-a');
    await node.start();
    node.startKubelet([], { TSKUBE_GC_PERIOD: '2000' });
  });
  after(() => node?.cleanup());

  const goodContainers = async (): Promise<string[]> =>
    (await node.podContainers())
      .filter((c) => GOOD.some((g) => c.labels[L_POD_NAME] === `${g}-${node.name}`))
      .map((c) => `${c.labels[L_POD_NAME]} ${c.id} ${c.created_at} ${c.state}`)
      .sort();
  const healthz = (): string => node.httpGet('http://127.0.0.1:10248/healthz', 3).trim();

  test('230+ bad and odd manifests in a batch, one by one and half-written', async () => {
    for (const g of GOOD)
      writeManifestAtomic(
        node.manifests,
        `${g}.yaml`,
        `apiVersion: v1\nkind: Pod\nmetadata: {name: ${g}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers: [{name: c, image: ${APP_IMAGE}, command: [sleep, '36000']}]\n`,
      );
    await waitFor(
      async () => (await goodContainers()).filter((l) => l.endsWith('CONTAINER_RUNNING')).length === 3,
      60_000,
      300,
      'three good pods running',
    );
    const good = await goodContainers();
    const cases = fuzzCases();
    assert.ok(cases.length >= 150, `${cases.length} cases`);
    const logFrom = node.kubeletLog().length;

    // A third in one batch, a third one by one, a third written in two halves (the kubelet sees the half first).
    const third = Math.ceil(cases.length / 3);
    for (const c of cases.slice(0, third)) writeManifestAtomic(node.manifests, c.file, c.content as string);
    for (const c of cases.slice(third, 2 * third)) {
      writeManifestAtomic(node.manifests, c.file, c.content as string);
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const c of cases.slice(2 * third)) {
      const buf = Buffer.isBuffer(c.content) ? c.content : Buffer.from(c.content);
      const p = path.join(node.manifests, c.file);
      fs.writeFileSync(p, buf.subarray(0, Math.floor(buf.length / 2)));
      await new Promise((r) => setTimeout(r, 30));
      fs.appendFileSync(p, buf.subarray(Math.floor(buf.length / 2)));
    }

    // Each file is reported or runs. Reported: a log line that starts with the file's path.
    const reported = (file: string): boolean =>
      node
        .kubeletLog()
        .slice(logFrom)
        .includes(`${path.join(node.manifests, file)}:`);
    // A pod that ran: it has a sandbox, ready or (activeDeadlineSeconds: 5 ran out) stopped.
    const fuzzPods = async (): Promise<Set<string>> =>
      new Set(
        (await node.podSandboxes())
          .filter((s) => !GOOD.some((g) => s.labels[L_POD_NAME] === `${g}-${node.name}`))
          .map((s) => s.labels[L_POD_NAME]!),
      );
    // The pod a file defines, when it can be read as JSON with a name: its sandbox is `<name>-<node>`.
    const podOf = (c: { content: string | Buffer }): string | undefined => {
      try {
        const o = JSON.parse(c.content.toString()) as { metadata?: { name?: unknown } };
        return typeof o.metadata?.name === 'string' ? `${o.metadata.name}-${node.name}` : undefined;
      } catch {
        return undefined;
      }
    };
    let missing: string[] = [];
    await waitFor(
      async () => {
        const running = await fuzzPods();
        // Empty files (and a bare null) are an empty set, as while an editor writes: nothing runs, nothing to report.
        missing = cases
          .filter((c) => !c.empty && !reported(c.file) && !(podOf(c) && running.has(podOf(c)!)))
          .map((c) => c.file);
        return missing.length === 0;
      },
      180_000,
      1000,
      'every file reported or running',
    ).catch((e: Error) => {
      throw new Error(`${e.message}: neither reported nor running: ${missing.join(', ')}`);
    });
    const running = await fuzzPods();
    for (const c of cases.filter((x) => x.valid))
      assert.ok(
        running.has(`${c.file.replace(/\.json$/, '')}-${node.name}`),
        `${c.file} is odd but valid: it runs (running: ${[...running].join(', ')})`,
      );

    // The kubelet is fine and says so; the good pods were never touched.
    assert.ok(node.kubelet && alive(node.kubelet.pid), 'the kubelet runs');
    assert.equal(healthz(), 'ok');
    assert.deepEqual(await goodContainers(), good, 'the good pods kept their containers');

    // The files go: everything of theirs goes, the good pods stay.
    for (const c of cases) fs.rmSync(path.join(node.manifests, c.file), { force: true });
    let left: string[] = [];
    await waitFor(
      async () => {
        left = [
          ...(await fuzzPods()),
          ...(await node.podContainers())
            .map((c) => c.labels[L_POD_NAME]!)
            .filter((n) => !GOOD.some((g) => n === `${g}-${node.name}`)),
        ];
        return left.length === 0;
      },
      180_000,
      1000,
      'nothing of the fuzz left in the runtime',
    ).catch((e: Error) => {
      throw new Error(`${e.message}: left: ${[...new Set(left)].join(', ')}`);
    });
    const root = node.kubeletRoot;
    await waitFor(
      () => fs.readdirSync(path.join(root, 'pods')).length === 3,
      120_000,
      1000,
      "only the good pods' directories",
    );
    const mounts = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((l) => l.split(' ')[4]?.startsWith(`${root}/`));
    const goodUids = fs.readdirSync(path.join(root, 'pods'));
    assert.deepEqual(
      mounts.filter((l) => !goodUids.some((u) => l.includes(`/pods/${u}/`))),
      [],
      'no mount of a fuzz pod is left',
    );
    assert.equal(
      fs.existsSync(path.join(REPO, 'relative')),
      false,
      "a relative hostPath created nothing in the kubelet's working directory",
    );
    assert.deepEqual(await goodContainers(), good, 'the good pods kept their containers to the end');
    assert.equal(healthz(), 'ok');
  });
});

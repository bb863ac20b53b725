// e2e: one node namespace with containerd and a kubelet joined to `tskube
// apiserver` running beside it, driven with the real kubectl.
import fs from 'node:fs';
import path from 'node:path';

import { ApiServerNode } from './apiserver-node.js';
import { sweepStale, TestNode } from './harness.js';
import { sh } from './proc.js';

export function clusterSkip(base: string | undefined): string | undefined {
  return base ?? (sh('sh', ['-c', 'command -v kubectl'], { allowFail: true }).trim() ? undefined : 'kubectl missing');
}

/** clusterSkip, and the official Python client (Debian python3-kubernetes) must be there too. */
export function pythonClientSkip(base: string | undefined): string | undefined {
  const skip = clusterSkip(base);
  if (skip) return skip;
  if (
    sh('/usr/bin/python3', ['-c', 'import kubernetes; print(1)'], { allowFail: true, timeoutMs: 20_000 }).trim() !== '1'
  ) {
    const msg = 'e2e prerequisite missing: python3-kubernetes (scripts/install-deps.sh installs it)';
    if (process.env.TSKUBE_E2E_SKIP === '1') return msg;
    throw new Error(msg);
  }
  return undefined;
}

export class TestCluster {
  node!: TestNode;
  as!: ApiServerNode;

  constructor(
    private readonly o: {
      /** false: no kubelet (a benchmark's floor drives the node) */ kubelet?: false;
      apiserverFlags?: string[];
      kubeletFlags?: string[];
      kubeletEnv?: NodeJS.ProcessEnv;
      /** extra KubeletConfiguration lines */ kubeletConfig?: string;
    } = {},
  ) {}

  apiserverFlags(): string[] {
    // Served on the node's address so that pods reach it through default/kubernetes.
    return [
      `--data-dir=${path.join(this.node.dir, 'apiserver-data')}`,
      '--enable-admission-plugins=NodeRestriction',
      '--bind-address=0.0.0.0',
      `--advertise-address=${this.node.nodeIP}`,
      `--default-local-storage-path=${path.join(this.node.dir, 'local-path')}`,
      ...(this.o.apiserverFlags ?? []),
    ];
  }

  kubeletFlags(): string[] {
    // The apiserver's CA also signs its kubelet client certificate: trusting it lets kubectl logs/exec through.
    return [
      `--kubeconfig=${path.join(this.as.dir, 'pki', `node-${this.node.name}.kubeconfig`)}`,
      `--client-ca-file=${this.as.caFile}`,
      `--node-ip=${this.node.nodeIP}`,
      ...(this.o.kubeletFlags ?? []),
    ];
  }

  /** `prepare` runs on the node before the apiserver and kubelet start (e.g. a benchmark's CRI floor). */
  async start(prepare?: (node: TestNode) => Promise<void>): Promise<this> {
    await sweepStale();
    this.node = new TestNode('node-a');
    await this.node.start();
    await prepare?.(this.node);
    if (this.o.kubeletConfig) fs.appendFileSync(path.join(this.node.dir, 'kubelet.yaml'), this.o.kubeletConfig);
    this.as = new ApiServerNode(this.node.netns);
    await this.as.start(this.apiserverFlags());
    if (this.o.kubelet !== false) this.startKubelet();
    return this;
  }

  startKubelet(): void {
    this.node.startKubelet(this.kubeletFlags(), this.o.kubeletEnv);
  }

  kubectl(args: string[], input?: string, timeoutMs?: number): string {
    return this.as.kubectl(args, input, timeoutMs);
  }

  /** kubectl apply of one object given as JSON. */
  apply(obj: object): string {
    return this.as.kubectl(['apply', '-f', '-'], JSON.stringify(obj));
  }

  /** True once `kubectl get` says the object is not found. */
  gone(args: string[]): boolean {
    try {
      this.as.kubectl(args);
      return false;
    } catch (e) {
      return /not found/.test((e as Error).message);
    }
  }

  async cleanup(): Promise<void> {
    await this.as?.cleanup();
    await this.node?.cleanup();
  }
}

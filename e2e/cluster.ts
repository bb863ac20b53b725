// e2e: one node namespace with containerd and a kubelet joined to `tskube
// apiserver` running beside it, driven with the real kubectl.
import path from 'node:path';
import { sweepStale, TestNode } from './harness.js';
import { ApiServerNode } from './apiserver-node.js';
import { sh } from './proc.js';

export function clusterSkip(base: string | undefined): string | undefined {
  return base ?? (sh('sh', ['-c', 'command -v kubectl'], { allowFail: true }).trim() ? undefined : 'kubectl missing');
}

export class TestCluster {
  node!: TestNode;
  as!: ApiServerNode;

  constructor(
    private readonly o: { apiserverFlags?: string[]; kubeletFlags?: string[]; kubeletEnv?: NodeJS.ProcessEnv } = {},
  ) {}

  apiserverFlags(): string[] {
    return [`--data-dir=${path.join(this.node.dir, 'apiserver-data')}`, '--enable-admission-plugins=NodeRestriction', ...(this.o.apiserverFlags ?? [])];
  }

  kubeletFlags(): string[] {
    return [`--kubeconfig=${path.join(this.as.dir, 'pki', `node-${this.node.name}.kubeconfig`)}`, ...(this.o.kubeletFlags ?? [])];
  }

  async start(): Promise<this> {
    await sweepStale();
    this.node = new TestNode('node-a');
    await this.node.start();
    this.as = new ApiServerNode(this.node.netns);
    await this.as.start(this.apiserverFlags());
    this.startKubelet();
    return this;
  }

  startKubelet(): void {
    this.node.startKubelet(this.kubeletFlags(), this.o.kubeletEnv);
  }

  kubectl(args: string[], input?: string): string {
    return this.as.kubectl(args, input);
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

// The pod network built into the agent (as k3s builds flannel in): once this
// Node has spec.podCIDR, write the CNI conflist containerd reads, turn on
// forwarding, keep pod egress masqueraded, and (host-gw) keep a route to every
// other node's podCIDR via its InternalIP, reconciled from a Node informer.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { KubeApi } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { ipInCidr } from '../../kube/cidr.js';
import { ExecIptables, type Iptables } from '../../proxy/iptables/apply.js';
import { CONFLIST_NAME, desiredRoutes, FORWARD_CHAIN, NAT_CHAIN, networkRules, nodeNets, parseRoutes, podConflist, ROUTE_PROTO, routeDiff, type PodNetworkMode, type Route } from './plan.js';

/** Runs `ip` (iproute2); behind an interface so the reconciler is testable without a kernel. */
export interface IpCommand {
  run(args: string[]): Promise<string>;
}

export const execIp: IpCommand = {
  run: (args) =>
    new Promise((resolve, reject) => {
      const p = spawn('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.stderr.on('data', (d: Buffer) => (err += d.toString()));
      p.on('error', (e) => reject(new Error(`ip ${args.join(' ')}: ${e.message}`)));
      p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`ip ${args.join(' ')}: ${err.trim() || `exit ${String(code)}`}`))));
    }),
};

export interface PodNetworkOptions {
  mode: PodNetworkMode;
  nodeName: string;
  /** This node's address: a podCIDR that covers it is refused. */
  nodeIP?: string;
  client: KubeApi;
  cniConfDir: string;
  /** host-local's dataDir; its default (/var/lib/cni/networks) when unset. */
  ipamDir?: string;
  log: Logger;
  ip?: IpCommand;
  iptables?: Iptables;
  /** Where ip_forward lives; a test points it elsewhere. */
  ipForwardFile?: string;
  /** Called once the conflist for this node is in place (pods waiting on the network can go on). */
  onReady?: () => void;
}

export class PodNetwork {
  private readonly nodes: Informer;
  private readonly ip: IpCommand;
  private readonly iptables: Iptables;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly said = new Set<string>();
  private lastRules = '';
  private ready = false;
  /** The conflist this node uses, once written. */
  podCIDR: string | undefined;

  constructor(private readonly o: PodNetworkOptions) {
    this.ip = o.ip ?? execIp;
    this.iptables = o.iptables ?? new ExecIptables();
    const kick = (): void => this.schedule();
    this.nodes = new Informer(o.client, { path: '/api/v1/nodes', onAdd: kick, onUpdate: kick, onDelete: kick, onError: (e) => o.log.warn(`pod network: node watch: ${e.message}`) });
  }

  async start(): Promise<void> {
    if (this.o.mode === 'none') return;
    this.o.log.info(`pod network: ${this.o.mode}; the CNI config goes to ${path.join(this.o.cniConfDir, CONFLIST_NAME)} once node ${this.o.nodeName} has a podCIDR`);
    void this.nodes.start().then(() => this.schedule());
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.nodes.stop();
    await this.running?.catch(() => undefined);
  }

  /** Coalesces bursts of Node events into one reconcile. */
  private schedule(delayMs = 100): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.running) {
        this.again = true;
        return;
      }
      this.running = this.reconcile()
        .catch((e: Error) => {
          this.o.log.error(`pod network: ${e.message}; retrying in 5 s`);
          this.schedule(5000);
        })
        .finally(() => {
          this.running = undefined;
          if (this.again) {
            this.again = false;
            this.schedule();
          }
        });
    }, delayMs);
    this.timer.unref();
  }

  /** Logs a message once per distinct text (a Node that stays wrong does not flood the log). */
  private once(level: 'info' | 'warn' | 'error', msg: string): void {
    if (this.said.has(msg)) return;
    this.said.add(msg);
    this.o.log[level](`pod network: ${msg}`);
  }

  async reconcile(): Promise<void> {
    const nets = nodeNets(this.nodes.list());
    const self = nets.find((n) => n.name === this.o.nodeName);
    if (!self?.podCIDR) return this.once('info', `waiting for node ${this.o.nodeName} to get spec.podCIDR (the controller manager's --allocate-node-cidrs)`);
    if (this.o.nodeIP && ipInCidr(this.o.nodeIP, self.podCIDR)) return this.once('error', `node ${this.o.nodeName}'s podCIDR ${self.podCIDR} covers the node's own address ${this.o.nodeIP}; not configuring the pod network (fix --cluster-cidr)`);
    if (!this.writeConflist(self.podCIDR)) return;
    await this.enableForwarding();
    const cidrs = nets.flatMap((n) => (n.podCIDR ? [n.podCIDR] : []));
    await this.applyRules(self.podCIDR, cidrs);
    if (this.o.mode === 'host-gw') await this.reconcileRoutes(nets);
  }

  /** Writes our conflist when it differs; false (with one warning) when another network's config is there. */
  private writeConflist(podCIDR: string): boolean {
    const dir = this.o.cniConfDir;
    fs.mkdirSync(dir, { recursive: true });
    const foreign = fs.readdirSync(dir).filter((f) => f !== CONFLIST_NAME && /\.(conflist|conf|json)$/.test(f)).sort();
    if (foreign.length && !fs.existsSync(path.join(dir, CONFLIST_NAME))) {
      this.once('warn', `${dir} already holds ${foreign.join(', ')}: leaving pod networking to that CNI (set --pod-network=none to silence this)`);
      return false;
    }
    const want = podConflist({ podCIDR, ipamDir: this.o.ipamDir });
    const file = path.join(dir, CONFLIST_NAME);
    const have = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (have !== want) {
      const tmp = `${file}.tmp`;
      fs.writeFileSync(tmp, want);
      fs.renameSync(tmp, file); // containerd watches the dir: it must never see half a file
      this.o.log.info(`pod network: wrote ${file} for podCIDR ${podCIDR}`);
    }
    this.podCIDR = podCIDR;
    if (!this.ready) {
      this.ready = true;
      this.o.onReady?.();
    }
    return true;
  }

  private async enableForwarding(): Promise<void> {
    const f = this.o.ipForwardFile ?? '/proc/sys/net/ipv4/ip_forward';
    if (fs.readFileSync(f, 'utf8').trim() !== '1') {
      fs.writeFileSync(f, '1');
      this.o.log.info('pod network: enabled net.ipv4.ip_forward');
    }
  }

  private async applyRules(own: string, cidrs: string[]): Promise<void> {
    const rules = networkRules(own, cidrs);
    if (rules === this.lastRules) return;
    await this.iptables.ensureChain('nat', NAT_CHAIN);
    await this.iptables.ensureChain('filter', FORWARD_CHAIN);
    await this.iptables.restore(rules);
    await this.iptables.ensureRule('nat', 'POSTROUTING', ['-m', 'comment', '--comment', 'tskube pod network masquerade', '-j', NAT_CHAIN]);
    await this.iptables.ensureRule('filter', 'FORWARD', ['-m', 'comment', '--comment', 'tskube pod network forwarding', '-j', FORWARD_CHAIN]);
    this.lastRules = rules;
  }

  private async reconcileRoutes(nets: ReturnType<typeof nodeNets>): Promise<void> {
    const { routes, skipped } = desiredRoutes(nets, this.o.nodeName);
    for (const s of skipped) this.once('warn', s);
    const current = parseRoutes(await this.ip.run(['-j', 'route', 'show', 'proto', String(ROUTE_PROTO)]));
    const { replace, remove } = routeDiff(current, routes);
    for (const r of replace) {
      await this.ip.run(['route', 'replace', r.dst, 'via', r.via, 'proto', String(ROUTE_PROTO)]);
      this.o.log.info(`pod network: route ${r.dst} via ${r.via}`);
    }
    for (const r of remove) {
      await this.ip.run(['route', 'del', r.dst, 'proto', String(ROUTE_PROTO)]);
      this.o.log.info(`pod network: removed route ${r.dst} via ${r.via}`);
    }
  }

  /** Our routes as the kernel has them (for tests and the bench). */
  async routes(): Promise<Route[]> {
    return parseRoutes(await this.ip.run(['-j', 'route', 'show', 'proto', String(ROUTE_PROTO)]));
  }
}

// The pod network built into the agent (as k3s builds flannel in): once this
// Node has spec.podCIDR, write the CNI conflist containerd reads, turn on
// forwarding, keep pod egress masqueraded, and (host-gw) keep a route to every
// other node's podCIDR via its InternalIP, reconciled from a Node informer.
// Dual stack (two spec.podCIDRs): each family gets its range in the conflist,
// its forwarding sysctl, its rules (iptables, ip6tables) and its routes: via the
// other nodes' InternalIPs of that family (host-gw) or over a VXLAN device of
// its own (vxlan: flannel.1, flannel-v6.1).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { type IPFamily, ipInAnyCidr } from '../../kube/cidr.js';
import type { KObj, KubeApi } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import { ExecIptables, type Iptables, IPTABLES_BINARIES } from '../../kube/iptables.js';
import type { Logger } from '../../kube/log.js';
import {
  CONFLIST_NAME,
  desiredRoutes,
  desiredVxlan,
  familyNet,
  FORWARD_CHAIN,
  NAT_CHAIN,
  networkAddress,
  networkRules,
  nodeNets,
  parseRoutes,
  peerDiff,
  podConflist,
  type PodNetworkMode,
  podNetworkPrefixes,
  type Route,
  ROUTE_PROTO,
  routeDiff,
  VXLAN_FAMILY,
  VXLAN_PORT,
  VXLAN_VNI,
  vxlanAnnotations,
  type VxlanPeer,
} from './plan.js';

/** Runs `ip` or `bridge` (iproute2); behind an interface so the reconciler is testable without a kernel. */
export interface IpCommand {
  /** `input` feeds stdin (`ip -batch -`). */
  run(args: string[], bin?: 'ip' | 'bridge', input?: string): Promise<string>;
}

export const execIp: IpCommand = {
  run: (args, bin = 'ip', input) =>
    new Promise((resolve, reject) => {
      const p = spawn(bin, args, { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
      if (input !== undefined) {
        p.stdin!.on('error', () => {});
        p.stdin!.end(input);
      }
      let out = '';
      let err = '';
      p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      p.on('error', (e) => reject(new Error(`${bin} ${args.join(' ')}: ${e.message}`)));
      p.on('close', (code) =>
        code === 0
          ? resolve(out)
          : reject(new Error(`${bin} ${args.join(' ')}: ${err.trim() || `exit ${String(code)}`}`)),
      );
    }),
};

export interface PodNetworkOptions {
  mode: PodNetworkMode;
  nodeName: string;
  /** This node's address: a podCIDR that covers it is refused. */
  nodeIP?: string;
  /** Its address of the other family (a dual-stack --node-ip): a podCIDR covering it is refused too. */
  nodeIP6?: string;
  client: KubeApi;
  cniConfDir: string;
  /** host-local's dataDir; its default (/var/lib/cni/networks) when unset. */
  ipamDir?: string;
  log: Logger;
  ip?: IpCommand;
  iptables?: Iptables;
  ip6tables?: Iptables;
  /** Where ip_forward (and IPv6's conf/all/forwarding) live; a test points them elsewhere. */
  ipForwardFile?: string;
  ip6ForwardFile?: string;
  /** How often everything is reconciled even when no Node changed. Default 60 s. */
  resyncMs?: number;
  /** Called once the conflist for this node is in place (pods waiting on the network can go on). */
  onReady?: () => void;
}

export class PodNetwork {
  private readonly nodes: Informer;
  private readonly ip: IpCommand;
  private readonly iptables: Record<IPFamily, Iptables>;
  private timer: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly said = new Set<string>();
  private ready = false;
  /** The podCIDRs the conflist holds, once written (primary first). */
  podCIDRs: string[] = [];

  constructor(private readonly o: PodNetworkOptions) {
    this.ip = o.ip ?? execIp;
    this.iptables = {
      IPv4: o.iptables ?? new ExecIptables(),
      IPv6: o.ip6tables ?? new ExecIptables(IPTABLES_BINARIES.IPv6),
    };
    const kick = (): void => this.schedule();
    // Nodes post status every few seconds; only a change of what the network uses (podCIDR, address, VTEP MAC) counts.
    const changed = (n: KObj, old: KObj): void => {
      if (JSON.stringify(nodeNets([n])) !== JSON.stringify(nodeNets([old]))) this.schedule();
    };
    this.nodes = new Informer(o.client, {
      path: '/api/v1/nodes',
      onAdd: kick,
      onUpdate: changed,
      onDelete: kick,
      onError: (e) => o.log.warn(`pod network: node watch: ${e.message}`),
    });
  }

  async start(): Promise<void> {
    if (this.o.mode === 'none') return;
    this.o.log.info(
      `pod network: ${this.o.mode}; the CNI config goes to ${path.join(this.o.cniConfDir, CONFLIST_NAME)} once node ${this.o.nodeName} has a podCIDR`,
    );
    void this.nodes.start().then(() => this.schedule());
    // A periodic pass puts back what someone else removed (a route, a rule), as flannel's route check does.
    this.resync = setInterval(() => this.schedule(), this.o.resyncMs ?? 60_000);
    this.resync.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    if (this.resync) clearInterval(this.resync);
    await this.nodes.stop();
    await this.running?.catch(() => undefined);
  }

  /** Coalesces bursts of Node events into one reconcile. */
  private schedule(delayMs = 10): void {
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
    const objs = this.nodes.list();
    const nets = nodeNets(objs);
    const self = nets.find((n) => n.name === this.o.nodeName);
    const selfObj = objs.find((n) => n.metadata.name === this.o.nodeName);
    if (!self?.podCIDR && !self?.podCIDR6)
      return this.once(
        'info',
        `waiting for node ${this.o.nodeName} to get spec.podCIDR (the controller manager's --allocate-node-cidrs)`,
      );
    const nodeIPs = [this.o.nodeIP, this.o.nodeIP6].filter((ip): ip is string => !!ip);
    // The Node's order: its first podCIDR is the pods' primary family (the first range of the conflist).
    let cidrs = ((selfObj?.spec?.podCIDRs as string[] | undefined) ?? []).filter(
      (c) => c === self.podCIDR || c === self.podCIDR6,
    );
    if (!cidrs.length) cidrs = [self.podCIDR, self.podCIDR6].filter((c): c is string => !!c);
    for (const c of cidrs) {
      const inside = nodeIPs.find((ip) => ipInAnyCidr(ip, c));
      if (inside)
        return this.once(
          'error',
          `node ${this.o.nodeName}'s podCIDR ${c} covers the node's own address ${inside}; not configuring the pod network (fix --cluster-cidr)`,
        );
    }
    // vxlan tunnels each family over the underlay of the same family (flannel's flannel.1 and flannel-v6.1): a family
    // without a node address of its own cannot be carried, and its podCIDR stays out of the conflist.
    if (this.o.mode === 'vxlan') {
      const missing = cidrs.filter((c) => !(c.includes(':') ? this.o.nodeIP6 : this.o.nodeIP));
      for (const c of missing)
        this.once(
          'warn',
          `vxlan: node ${this.o.nodeName} has no ${c.includes(':') ? 'IPv6' : 'IPv4'} address to tunnel its podCIDR ${c} over (--node-ip=<IPv4>,<IPv6>); pods get no address from it`,
        );
      cidrs = cidrs.filter((c) => !missing.includes(c));
      if (!cidrs.length) return;
    }
    if (!this.writeConflist(cidrs)) return;
    for (const own of cidrs) {
      const family: IPFamily = own.includes(':') ? 'IPv6' : 'IPv4';
      await this.enableForwarding(family);
      const prefixes = podNetworkPrefixes(
        nets.flatMap((n) => familyNet(n, family).podCIDR ?? []),
        nets.flatMap((n) => familyNet(n, family).internalIP ?? []),
      );
      await this.applyRules(family, own, prefixes);
      if (this.o.mode === 'host-gw') {
        const { routes, skipped } = desiredRoutes(nets, this.o.nodeName, family, this.ownIPs());
        for (const m of skipped) this.once('warn', m);
        await this.reconcileRoutes(family, routes);
      } else if (this.o.mode === 'vxlan') {
        await this.ensureVxlan(family, own, familyNet(self, family).vtepMAC);
        const { routes, peers, skipped } = desiredVxlan(nets, this.o.nodeName, family, this.ownIPs());
        for (const m of skipped) this.once('warn', m);
        await this.reconcilePeers(VXLAN_FAMILY[family].dev, peers);
        await this.reconcileRoutes(family, routes);
      }
    }
  }

  /**
   * A family's VXLAN device (flannel's: VNI 1, UDP 8472, no learning; flannel.1 over IPv4, flannel-v6.1 over IPv6)
   * with this node's VTEP address, and its MAC on the Node.
   */
  private ownIPs(): string[] {
    return [this.o.nodeIP, this.o.nodeIP6].filter((ip): ip is string => !!ip);
  }

  private async ensureVxlan(family: IPFamily, podCIDR: string, published: string | undefined): Promise<void> {
    const { dev: name, overhead, hostBits } = VXLAN_FAMILY[family];
    const nodeIP = family === 'IPv4' ? this.o.nodeIP : this.o.nodeIP6;
    if (!nodeIP) throw new Error(`vxlan needs the node's ${family} address (--node-ip)`);
    type Link = {
      ifname: string;
      address: string;
      mtu: number;
      linkinfo?: { info_data?: { id?: number; local?: string; local6?: string; port?: number } };
    };
    const links = JSON.parse(await this.ip.run(['-j', '-d', 'link', 'show'])) as Link[];
    let dev = links.find((l) => l.ifname === name);
    const info = dev?.linkinfo?.info_data;
    if (
      dev &&
      (info?.id !== VXLAN_VNI || (family === 'IPv4' ? info.local : info.local6) !== nodeIP || info.port !== VXLAN_PORT)
    ) {
      await this.ip.run(['link', 'del', name]);
      dev = undefined;
    }
    if (!dev) {
      const addrs = JSON.parse(await this.ip.run(['-j', 'addr', 'show'])) as {
        ifname: string;
        mtu: number;
        addr_info: { local: string }[];
      }[];
      const uplink = addrs.find((a) => a.addr_info.some((x) => x.local === nodeIP));
      if (!uplink) throw new Error(`vxlan: no interface holds the node IP ${nodeIP}`);
      await this.ip.run([
        'link',
        'add',
        name,
        'type',
        'vxlan',
        'id',
        String(VXLAN_VNI),
        'local',
        nodeIP,
        'dev',
        uplink.ifname,
        'dstport',
        String(VXLAN_PORT),
        'nolearning',
      ]);
      await this.ip.run(['link', 'set', name, 'mtu', String(uplink.mtu - overhead), 'up']);
      this.o.log.info(`pod network: created ${name} (VNI ${VXLAN_VNI}, UDP ${VXLAN_PORT}) over ${uplink.ifname}`);
      dev = (JSON.parse(await this.ip.run(['-j', 'link', 'show', name])) as Link[])[0]!;
    }
    const want = `${networkAddress(podCIDR)}/${hostBits}`;
    const have =
      (
        JSON.parse(await this.ip.run(['-j', 'addr', 'show', 'dev', name])) as {
          addr_info: { local: string; prefixlen: number; scope?: string }[];
        }[]
      )[0]?.addr_info
        .filter((a) => a.scope !== 'link')
        .map((a) => `${a.local}/${a.prefixlen}`) ?? [];
    if (have.length !== 1 || have[0] !== want) {
      // Only the global addresses: the kernel's IPv6 link-local one stays.
      for (const a of have) await this.ip.run(['addr', 'del', a, 'dev', name]);
      await this.ip.run(['addr', 'add', want, 'dev', name, ...(family === 'IPv6' ? ['nodad'] : [])]);
    }
    const mac = dev.address.toLowerCase();
    if (published !== mac) {
      await this.o.client.patch(
        `/api/v1/nodes/${this.o.nodeName}`,
        { metadata: { annotations: vxlanAnnotations(mac, nodeIP, family) } },
        'merge',
      );
      this.o.log.info(`pod network: published ${family} VTEP MAC ${mac} on node ${this.o.nodeName}`);
    }
  }

  private async reconcilePeers(dev: string, peers: VxlanPeer[]): Promise<void> {
    const neigh = (
      JSON.parse(await this.ip.run(['-j', 'neigh', 'show', 'dev', dev])) as { dst: string; lladdr?: string }[]
    )
      .filter((n) => n.lladdr)
      .map((n) => ({ ip: n.dst, mac: n.lladdr!.toLowerCase() }));
    const fdb = (
      JSON.parse(await this.ip.run(['-j', 'fdb', 'show', 'dev', dev], 'bridge')) as { mac: string; dst?: string }[]
    )
      .filter((f) => f.dst)
      .map((f) => ({ mac: f.mac.toLowerCase(), dst: f.dst! }));
    const d = peerDiff({ neigh, fdb }, peers);
    for (const p of d.setFdb)
      await this.ip.run(['fdb', 'replace', p.mac, 'dev', dev, 'dst', p.nodeIP, 'self', 'permanent'], 'bridge');
    for (const p of d.setNeigh)
      await this.ip.run(['neigh', 'replace', p.gateway, 'lladdr', p.mac, 'dev', dev, 'nud', 'permanent']);
    for (const n of d.delNeigh) await this.ip.run(['neigh', 'del', n.ip, 'dev', dev]);
    for (const f of d.delFdb) await this.ip.run(['fdb', 'del', f.mac, 'dev', dev, 'dst', f.dst, 'self'], 'bridge');
  }

  /** Writes our conflist when it differs; false (with one warning) when another network's config is there. */
  private writeConflist(podCIDRs: string[]): boolean {
    const dir = this.o.cniConfDir;
    fs.mkdirSync(dir, { recursive: true });
    const foreign = fs
      .readdirSync(dir)
      .filter((f) => f !== CONFLIST_NAME && /\.(conflist|conf|json)$/.test(f))
      .sort();
    // Another network's config (installed before or after ours) wins: containerd would pick by name, so stand back.
    if (foreign.length) {
      this.once(
        'warn',
        `${dir} already holds ${foreign.join(', ')}: leaving pod networking to that CNI (set --pod-network=none to silence this)`,
      );
      return false;
    }
    const want = podConflist({ podCIDRs, ipamDir: this.o.ipamDir });
    const file = path.join(dir, CONFLIST_NAME);
    const have = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (have !== want) {
      const tmp = `${file}.tmp`;
      fs.writeFileSync(tmp, want);
      fs.renameSync(tmp, file); // containerd watches the dir: it must never see half a file
      this.o.log.info(`pod network: wrote ${file} for podCIDR${podCIDRs.length > 1 ? 's' : ''} ${podCIDRs.join(',')}`);
    }
    this.podCIDRs = podCIDRs;
    if (!this.ready) {
      this.ready = true;
      this.o.onReady?.();
    }
    return true;
  }

  private async enableForwarding(family: IPFamily): Promise<void> {
    const [f, name] =
      family === 'IPv4'
        ? [this.o.ipForwardFile ?? '/proc/sys/net/ipv4/ip_forward', 'net.ipv4.ip_forward']
        : [this.o.ip6ForwardFile ?? '/proc/sys/net/ipv6/conf/all/forwarding', 'net.ipv6.conf.all.forwarding'];
    if (fs.readFileSync(f, 'utf8').trim() !== '1') {
      fs.writeFileSync(f, '1');
      this.o.log.info(`pod network: enabled ${name}`);
    }
  }

  /** Rewrites our two chains (the restore declares them, creating them if needed) and makes sure they are jumped to. */
  private async applyRules(family: IPFamily, own: string, cidrs: string[]): Promise<void> {
    const t = this.iptables[family];
    await t.restore(networkRules(own, cidrs));
    await t.ensureRule('nat', 'POSTROUTING', [
      '-m',
      'comment',
      '--comment',
      'tskube pod network masquerade',
      '-j',
      NAT_CHAIN,
    ]);
    await t.ensureRule('filter', 'FORWARD', [
      '-m',
      'comment',
      '--comment',
      'tskube pod network forwarding',
      '-j',
      FORWARD_CHAIN,
    ]);
  }

  private async reconcileRoutes(family: IPFamily, routes: Route[]): Promise<void> {
    const f = family === 'IPv6' ? ['-6'] : [];
    const current = parseRoutes(await this.ip.run([...f, '-j', 'route', 'show', 'proto', String(ROUTE_PROTO)]));
    const { replace, remove } = routeDiff(current, routes);
    const cmds = [
      ...replace.map((r) => [
        'route',
        'replace',
        r.dst,
        'via',
        r.via,
        ...(r.dev ? ['dev', r.dev, 'onlink'] : []),
        'proto',
        String(ROUTE_PROTO),
      ]),
      ...remove.map((r) => ['route', 'del', r.dst, 'proto', String(ROUTE_PROTO)]),
    ];
    // One `ip` per change is a process start each: many changes (a node's first sync) go through one `ip -batch`.
    if (cmds.length > 1)
      await this.ip.run([...f, '-force', '-batch', '-'], 'ip', `${cmds.map((c) => c.join(' ')).join('\n')}\n`);
    else if (cmds.length === 1) await this.ip.run([...f, ...cmds[0]!]);
    for (const r of replace) this.o.log.info(`pod network: route ${r.dst} via ${r.via}${r.dev ? ` dev ${r.dev}` : ''}`);
    for (const r of remove) this.o.log.info(`pod network: removed route ${r.dst} via ${r.via}`);
  }
}

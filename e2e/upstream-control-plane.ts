// e2e: the real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler from the upstream fixtures) run as processes in a VM with the flags
// kubeadm gives their static pods, its PKI and kubeconfigs made by kubeadm's own phases.
import fs from 'node:fs';
import path from 'node:path';

import { KUBERNETES_VERSION, upstreamDir } from '../scripts/upstream-plan.js';
import { REPO } from './harness.js';
import { type Proc, sh, start, waitFor } from './proc.js';
import type { Vm } from './vms.js';

export const SERVICE_CIDR = '10.96.0.0/12';
export const CLUSTER_CIDR = '10.244.0.0/16';

/** The fixtures this needs; a reason to skip when one is missing (`npm run upstream -- build` makes them). */
export function upstreamSkip(
  names = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubeadm'],
): string | undefined {
  const missing = names.filter((n) => !fs.existsSync(path.join(upstreamDir(), n)));
  if (!missing.length) return undefined;
  const msg = `upstream fixtures missing in ${upstreamDir()}: ${missing.join(', ')} (npm run upstream -- build)`;
  if (process.env.TSKUBE_E2E_SKIP === '1') return msg;
  throw new Error(msg);
}

export const upstreamBin = (name: string): string => path.join(upstreamDir(), name);

export class UpstreamControlPlane {
  readonly dir: string;
  readonly pki: string;
  readonly procs: Proc[] = [];

  constructor(readonly vm: Vm) {
    this.dir = path.join(vm.dir, 'control-plane');
    this.pki = path.join(this.dir, 'pki');
  }

  /** kubeadm's admin.conf (group kubeadm:cluster-admins, bound to cluster-admin once started). */
  get adminConf(): string {
    return path.join(this.dir, 'admin.conf');
  }

  get server(): string {
    return `https://${this.vm.ip}:6443`;
  }

  private kubeadm(args: string[]): string {
    return this.vm.exec(upstreamBin('kubeadm'), args, { timeoutMs: 60_000 });
  }

  kubectl(args: string[], input?: string, kubeconfig = this.adminConf): string {
    return this.vm.exec(upstreamBin('kubectl'), [`--kubeconfig=${kubeconfig}`, ...args], { input, timeoutMs: 60_000 });
  }

  private run(name: string, args: string[]): void {
    const p = start(upstreamBin(name), args, path.join(this.dir, `${name}.log`), { netns: this.vm.netns });
    this.procs.push(p);
    this.vm.extraPids.push(p.pid);
    this.vm.record();
  }

  log(name: string): string {
    try {
      return fs.readFileSync(path.join(this.dir, `${name}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true });
    const common = [`--kubernetes-version=${KUBERNETES_VERSION}`, `--apiserver-advertise-address=${this.vm.ip}`];
    this.kubeadm([
      'init',
      'phase',
      'certs',
      'all',
      `--cert-dir=${this.pki}`,
      `--service-cidr=${SERVICE_CIDR}`,
      ...common,
    ]);
    for (const kc of ['admin', 'super-admin', 'controller-manager', 'scheduler']) {
      this.kubeadm([
        'init',
        'phase',
        'kubeconfig',
        kc,
        `--cert-dir=${this.pki}`,
        `--kubeconfig-dir=${this.dir}`,
        ...common,
      ]);
    }
    const p = (f: string): string => path.join(this.pki, f);
    const ip = this.vm.ip;
    this.run('etcd', [
      `--name=${this.vm.name}`,
      `--data-dir=${path.join(this.dir, 'etcd')}`,
      `--advertise-client-urls=https://${ip}:2379`,
      `--listen-client-urls=https://127.0.0.1:2379,https://${ip}:2379`,
      `--initial-advertise-peer-urls=https://${ip}:2380`,
      `--listen-peer-urls=https://${ip}:2380`,
      `--initial-cluster=${this.vm.name}=https://${ip}:2380`,
      '--listen-metrics-urls=http://127.0.0.1:2381',
      `--cert-file=${p('etcd/server.crt')}`,
      `--key-file=${p('etcd/server.key')}`,
      `--trusted-ca-file=${p('etcd/ca.crt')}`,
      '--client-cert-auth=true',
      `--peer-cert-file=${p('etcd/peer.crt')}`,
      `--peer-key-file=${p('etcd/peer.key')}`,
      `--peer-trusted-ca-file=${p('etcd/ca.crt')}`,
      '--peer-client-cert-auth=true',
      '--snapshot-count=10000',
    ]);
    this.run('kube-apiserver', [
      `--advertise-address=${ip}`,
      '--allow-privileged=true',
      '--authorization-mode=Node,RBAC',
      `--client-ca-file=${p('ca.crt')}`,
      '--enable-admission-plugins=NodeRestriction',
      '--enable-bootstrap-token-auth=true',
      `--etcd-cafile=${p('etcd/ca.crt')}`,
      `--etcd-certfile=${p('apiserver-etcd-client.crt')}`,
      `--etcd-keyfile=${p('apiserver-etcd-client.key')}`,
      '--etcd-servers=https://127.0.0.1:2379',
      `--kubelet-client-certificate=${p('apiserver-kubelet-client.crt')}`,
      `--kubelet-client-key=${p('apiserver-kubelet-client.key')}`,
      '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname',
      `--proxy-client-cert-file=${p('front-proxy-client.crt')}`,
      `--proxy-client-key-file=${p('front-proxy-client.key')}`,
      '--requestheader-allowed-names=front-proxy-client',
      `--requestheader-client-ca-file=${p('front-proxy-ca.crt')}`,
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-username-headers=X-Remote-User',
      '--secure-port=6443',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${p('sa.pub')}`,
      `--service-account-signing-key-file=${p('sa.key')}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      `--tls-cert-file=${p('apiserver.crt')}`,
      `--tls-private-key-file=${p('apiserver.key')}`,
      `--audit-log-path=${path.join(this.dir, 'audit.log')}`,
      `--audit-policy-file=${this.auditPolicy()}`,
    ]);
    const superAdmin = path.join(this.dir, 'super-admin.conf');
    await waitFor(
      () =>
        sh(upstreamBin('kubectl'), [`--kubeconfig=${superAdmin}`, 'get', '--raw=/readyz'], {
          netns: this.vm.netns,
          allowFail: true,
          timeoutMs: 10_000,
        }) === 'ok',
      120_000,
      500,
      `kube-apiserver ready:\n${this.log('kube-apiserver').slice(-3000)}`,
    );
    // As kubeadm init: admin.conf's group is cluster-admin.
    this.kubectl(
      [
        'create',
        'clusterrolebinding',
        'kubeadm:cluster-admins',
        '--clusterrole=cluster-admin',
        '--group=kubeadm:cluster-admins',
      ],
      undefined,
      superAdmin,
    );
    this.run('kube-controller-manager', [
      '--allocate-node-cidrs=true',
      `--authentication-kubeconfig=${path.join(this.dir, 'controller-manager.conf')}`,
      `--authorization-kubeconfig=${path.join(this.dir, 'controller-manager.conf')}`,
      '--bind-address=127.0.0.1',
      `--client-ca-file=${p('ca.crt')}`,
      `--cluster-cidr=${CLUSTER_CIDR}`,
      '--cluster-name=kubernetes',
      `--cluster-signing-cert-file=${p('ca.crt')}`,
      `--cluster-signing-key-file=${p('ca.key')}`,
      '--controllers=*,bootstrapsigner,tokencleaner',
      `--kubeconfig=${path.join(this.dir, 'controller-manager.conf')}`,
      '--leader-elect=true',
      `--requestheader-client-ca-file=${p('front-proxy-ca.crt')}`,
      `--root-ca-file=${p('ca.crt')}`,
      `--service-account-private-key-file=${p('sa.key')}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--use-service-account-credentials=true',
    ]);
    this.run('kube-scheduler', [
      `--authentication-kubeconfig=${path.join(this.dir, 'scheduler.conf')}`,
      `--authorization-kubeconfig=${path.join(this.dir, 'scheduler.conf')}`,
      '--bind-address=127.0.0.1',
      `--kubeconfig=${path.join(this.dir, 'scheduler.conf')}`,
      '--leader-elect=true',
    ]);
    // The default ServiceAccount appears once the controller manager's serviceaccount controller runs.
    await waitFor(
      () => /default/.test(this.kubectl(['get', 'serviceaccount', 'default', '-o', 'name', '--ignore-not-found'])),
      120_000,
      500,
      `controller manager running:\n${this.log('kube-controller-manager').slice(-3000)}`,
    );
  }

  /**
   * tskube's cluster DNS beside the control plane, as a user would run it there: the add-on's Service and RBAC from
   * `tskube addon dns`, and a kubeconfig for system:coredns signed by the cluster CA (`kubeadm kubeconfig user`).
   */
  startDns(tskube: (args: string[]) => string): Proc {
    const kubeconfig = this.userKubeconfig('system:coredns', 'coredns.conf');
    tskube(['addon', 'dns', `--kubeconfig=${this.adminConf}`]);
    const args = [
      'dns',
      `--kubeconfig=${kubeconfig}`,
      `--publish-address=${this.vm.ip}`,
      `--hostname-override=${this.vm.name}`,
      `--resolv-conf=${path.join(this.dir, 'no-upstream.conf')}`,
    ];
    fs.writeFileSync(path.join(this.dir, 'no-upstream.conf'), '');
    const p = start(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'cli/tskube.ts'), ...args],
      path.join(this.dir, 'dns.log'),
      { netns: this.vm.netns, cwd: REPO },
    );
    this.procs.push(p);
    this.vm.extraPids.push(p.pid);
    this.vm.record();
    return p;
  }

  /** A kubeconfig for `user`, signed by the cluster CA (`kubeadm kubeconfig user`), written to `file` in the VM's dir. */
  private userKubeconfig(user: string, file: string): string {
    const config = path.join(this.dir, 'kubeadm.yaml');
    fs.writeFileSync(
      config,
      `apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: ${KUBERNETES_VERSION}\ncertificatesDir: ${this.pki}\ncontrolPlaneEndpoint: ${this.vm.ip}:6443\n`,
    );
    const kubeconfig = path.join(this.dir, file);
    fs.writeFileSync(kubeconfig, this.kubeadm(['kubeconfig', 'user', `--client-name=${user}`, `--config=${config}`]), {
      mode: 0o600,
    });
    return kubeconfig;
  }

  /**
   * tskube's kube-proxy on the control plane's host, as kubeadm runs kube-proxy on every node: the apiserver reaches
   * webhooks and aggregated APIs by their Service's ClusterIP. It runs as system:kube-proxy, the user upstream's
   * bootstrap policy binds to system:node-proxier.
   */
  startProxy(): Proc {
    const kubeconfig = this.userKubeconfig('system:kube-proxy', 'kube-proxy.conf');
    const args = [
      'proxy',
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${this.vm.name}`,
      `--cluster-cidr=${CLUSTER_CIDR}`,
    ];
    const p = start(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'cli/tskube.ts'), ...args],
      path.join(this.dir, 'proxy.log'),
      { netns: this.vm.netns, cwd: REPO },
    );
    this.procs.push(p);
    this.vm.extraPids.push(p.pid);
    this.vm.record();
    return p;
  }

  /** Metadata of every request, for finding what the apiserver refused tskube's agents. */
  private auditPolicy(): string {
    const file = path.join(this.dir, 'audit-policy.yaml');
    fs.writeFileSync(
      file,
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n',
    );
    return file;
  }

  /** Audit events for requests by `users` that the apiserver refused (4xx but 404/409, 5xx). */
  refusals(users: (u: string) => boolean): string[] {
    let text: string;
    try {
      text = fs.readFileSync(path.join(this.dir, 'audit.log'), 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .filter(Boolean)
      .map(
        (l) =>
          JSON.parse(l) as {
            user?: { username?: string };
            verb?: string;
            requestURI?: string;
            responseStatus?: { code?: number; message?: string };
          },
      )
      .filter(
        (e) =>
          users(e.user?.username ?? '') &&
          (e.responseStatus?.code ?? 200) >= 400 &&
          ![404, 409].includes(e.responseStatus?.code ?? 0),
      )
      .map(
        (e) =>
          `${e.user?.username} ${e.verb} ${e.requestURI}: ${e.responseStatus?.code} ${e.responseStatus?.message ?? ''}`,
      );
  }
}

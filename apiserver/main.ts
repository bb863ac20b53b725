// Starts the dev apiserver: storage (memory, or persistent with --data-dir),
// PKI and kubeconfigs in --cert-dir, and the HTTPS server.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { createLogger } from '../kube/log.js';
import { firstIPv4 } from '../kube/platform.js';
import { type AdmissionConfig, loadAdmissionConfig } from './admission/admission-config.js';
import { certificateApproval, certificateSigning, certificateSubjectRestriction } from './admission/certificates.js';
import { denyServiceExternalIPs } from './admission/deny-service-external-ips.js';
import { nodeRestriction } from './admission/node-restriction.js';
import { DEFAULT_POD_SECURITY, podSecurity } from './admission/pod-security/admission.js';
import { rbacEscalation } from './admission/rbac-escalation.js';
import type { AdmissionPlugin } from './api/admission.js';
import { IpAllocator, serviceCidrs } from './api/allocators.js';
import { Api } from './api/api.js';
import { expireEvents } from './api/event-ttl.js';
import { reconcileKubernetesEndpoints } from './api/kubernetes-endpoints.js';
import { alwaysAllow, type Authorizer, AuthorizerChain } from './authz/authorizer.js';
import { ensureBootstrapPolicy, KUBELET_CLIENT_USER } from './authz/bootstrap-policy.js';
import { FULL_AUTHORITY } from './authz/escalation.js';
import { NodeAuthorizer } from './authz/node-authorizer.js';
import { RbacAuthorizer } from './authz/rbac.js';
import { ensureClusterInfo } from './bootstrap/cluster-info.js';
import { type RunningControllers, startControllers } from './controllers/index.js';
import { type NodeIpamOptions, validateClusterCidr } from './controllers/node-ipam.js';
import { Authenticator } from './http/authn.js';
import { KubeletProxy } from './http/kubelet-proxy.js';
import { ApiServer } from './http/server.js';
import { ensureClientCert, ensureServiceAccountKey, type Identity } from './pki.js';
import {
  adminIdentity,
  dnsIdentity,
  ensurePki,
  ensureTokens,
  nodeIdentity,
  proxyIdentity,
  writeKubeconfig,
} from './pki.js';
import { ServiceAccountTokens } from './serviceaccount/tokens.js';
import { Store } from './storage/store.js';

export interface ApiServerConfig {
  certDir: string;
  dataDir?: string;
  bindAddress: string;
  securePort: number;
  advertiseAddress: string;
  serviceClusterIpRange: string;
  nodeNames: string[];
  historySize?: number;
  bookmarkIntervalSec?: number;
  anonymousAuth?: boolean;
  /** --allocate-node-cidrs, --cluster-cidr (one CIDR per family), --node-cidr-mask-size(-ipv4|-ipv6). */
  allocateNodeCidrs?: boolean;
  clusterCidr?: string;
  nodeCidrMaskSize?: number;
  nodeCidrMaskSizeIPv4?: number;
  nodeCidrMaskSizeIPv6?: number;
  /** --cluster-signing-duration: the longest certificate the CSR signer issues, in ms. */
  clusterSigningDurationMs?: number;
  /** --default-local-storage-path: the local-path provisioner's directory on nodes. */
  localStoragePath?: string;
  /** --authorization-mode: AlwaysAllow (default), or e.g. Node,RBAC. */
  authorizationModes?: string[];
  /** --enable-admission-plugins: NodeRestriction, DenyServiceExternalIPs (the CSR plugins and PodSecurity are always on). */
  admissionPlugins?: string[];
  /** --admission-control-config-file: an AdmissionConfiguration (PodSecurity's defaults and exemptions). */
  admissionControlConfigFile?: string;
  /** kube-controller-manager's --controllers; default ["*"]. */
  controllers?: string[];
  nodeMonitorGracePeriodMs?: number;
  nodeMonitorPeriodMs?: number;
  /** --event-ttl: Events go this long after their last write; default 1h. */
  eventTtlMs?: number;
  log?: (line: string) => void;
}

const ADMISSION_PLUGINS: Record<string, AdmissionPlugin> = {
  NodeRestriction: nodeRestriction,
  DenyServiceExternalIPs: denyServiceExternalIPs,
};

/** How the apiserver talks to kubelets (kubeadm's apiserver-kubelet-client). */
export const kubeletClientIdentity: Identity = {
  file: 'apiserver-kubelet-client.kubeconfig',
  cn: KUBELET_CLIENT_USER,
  orgs: ['system:masters'],
};

export function authorizerChain(store: Store, modes: string[] = ['AlwaysAllow']): AuthorizerChain {
  return new AuthorizerChain(
    modes.map((m): Authorizer => {
      switch (m) {
        case 'AlwaysAllow':
          return alwaysAllow;
        case 'Node':
          return new NodeAuthorizer(store);
        case 'RBAC':
          return new RbacAuthorizer(store);
        default:
          throw new Error(`--authorization-mode: unknown mode "${m}" (known: AlwaysAllow, Node, RBAC)`);
      }
    }),
  );
}

/** Plugins upstream turns on by default; naming them in --enable-admission-plugins changes nothing. */
const DEFAULT_PLUGINS = ['CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'PodSecurity'];

export function admissionChain(names: string[] = []): AdmissionPlugin[] {
  return names
    .filter((n) => !DEFAULT_PLUGINS.includes(n))
    .map((n) => {
      const p = ADMISSION_PLUGINS[n];
      if (!p)
        throw new Error(
          `--enable-admission-plugins: unknown plugin "${n}" (known: ${[...Object.keys(ADMISSION_PLUGINS), ...DEFAULT_PLUGINS].join(', ')})`,
        );
      return p;
    });
}

/** Always on: RBAC's escalation checks (part of its registry upstream) and the default-on CSR and PodSecurity plugins. */
function defaultAdmission(rbac: RbacAuthorizer, authz: AuthorizerChain, config: AdmissionConfig): AdmissionPlugin[] {
  return [
    rbacEscalation(rbac, authz),
    certificateSubjectRestriction,
    certificateApproval(authz),
    certificateSigning(authz),
    podSecurity(config.podSecurity),
  ];
}

export interface RunningApiServer {
  url: string;
  port: number;
  api: Api;
  server: ApiServer;
  controllers: RunningControllers;
  kubeconfigs: Record<string, string>;
  stop(): Promise<void>;
}

export async function startApiServer(c: ApiServerConfig): Promise<RunningApiServer> {
  const log = c.log ?? ((l: string) => process.stderr.write(`${new Date().toISOString()} apiserver: ${l}\n`));
  // Bad ranges stop the start before anything is created.
  const serviceRanges = serviceCidrs(c.serviceClusterIpRange).map((r) => new IpAllocator(r));
  let nodeIpam: NodeIpamOptions | undefined;
  if (c.allocateNodeCidrs) {
    nodeIpam = {
      clusterCidr: c.clusterCidr ?? '10.244.0.0/16',
      nodeCidrMaskSize: c.nodeCidrMaskSize,
      nodeCidrMaskSizeIPv4: c.nodeCidrMaskSizeIPv4,
      nodeCidrMaskSizeIPv6: c.nodeCidrMaskSizeIPv6,
    };
    validateClusterCidr(
      nodeIpam,
      serviceRanges.map((r) => r.cidr).join(','),
      c.advertiseAddress ? [c.advertiseAddress] : [],
    );
  }
  // As upstream: in-cluster clients verify the apiserver at the kubernetes Service's ClusterIP (the primary range's) and names.
  const ips = [...new Set(['127.0.0.1', serviceRanges[0]!.first, c.advertiseAddress].filter(Boolean))];
  const pki = ensurePki(c.certDir, {
    ips,
    dns: [
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
      os.hostname(),
    ],
  });
  const ids = [adminIdentity, proxyIdentity, dnsIdentity, ...c.nodeNames.map(nodeIdentity)];
  const tokens = ensureTokens(c.certDir, ids);
  const admissionConfig = c.admissionControlConfigFile
    ? loadAdmissionConfig(c.admissionControlConfigFile)
    : { podSecurity: DEFAULT_POD_SECURITY };
  const store = new Store({ dataDir: c.dataDir, historySize: c.historySize, log });
  store.onWatcherError = (e) => log(`watch delivery: ${e.message}`);
  const modes = c.authorizationModes?.length ? c.authorizationModes : ['AlwaysAllow'];
  const authz = authorizerChain(store, modes);
  const rbac =
    authz.authorizers.find((z): z is RbacAuthorizer => z instanceof RbacAuthorizer) ?? new RbacAuthorizer(store);
  // Escalation prevention is part of the RBAC registry upstream, so it is always on.
  const api = new Api(store, c.serviceClusterIpRange, [
    ...admissionChain(c.admissionPlugins),
    ...defaultAdmission(rbac, authz, admissionConfig),
  ]);
  // No audit log: violations of a namespace's audit level go to the apiserver's log.
  api.onAuditAnnotation = (a, key, value) => {
    if (key.endsWith('/audit-violations'))
      log(`audit: ${a.user.name} ${a.operation} ${a.resource.resource} ${a.namespace}/${a.name}: ${key}=${value}`);
  };
  ensureBootstrapPolicy(api);
  const kc = ensureClientCert(pki, kubeletClientIdentity);
  const saKey = ensureServiceAccountKey(pki);
  const saTokens = await ServiceAccountTokens.load(saKey.key, saKey.pub, (resource, ns, name) =>
    api.find(api.res('', resource), resource === 'nodes' ? '' : ns, name),
  );
  const server = new ApiServer({
    api,
    cert: pki.serverCert,
    key: pki.serverKey,
    ca: pki.caCert,
    authn: new Authenticator(tokens, c.anonymousAuth ?? false, saTokens, (name) =>
      api.find(api.res('', 'secrets'), 'kube-system', name),
    ),
    serviceAccountTokens: saTokens,
    authz,
    alwaysAllow: modes.length === 1 && modes[0] === 'AlwaysAllow',
    // Rules come from RBAC; with AlwaysAllow first in the chain everything is allowed; other authorizers (Node) may add more.
    rulesFor: (user, ns) =>
      modes[0] === 'AlwaysAllow'
        ? { rules: FULL_AUTHORITY, incomplete: false }
        : { rules: modes.includes('RBAC') ? rbac.rulesFor(user, ns) : [], incomplete: modes.some((m) => m !== 'RBAC') },
    kubelets: new KubeletProxy(api, { cert: fs.readFileSync(kc.cert), key: fs.readFileSync(kc.key) }),
    log,
    bookmarkIntervalSec: c.bookmarkIntervalSec,
  });
  const port = await server.listen(c.securePort, c.bindAddress);
  const host = c.bindAddress === '0.0.0.0' ? c.advertiseAddress || '127.0.0.1' : c.bindAddress;
  const url = `https://${host}:${port}`;
  server.externalUrl = url;
  const kubeconfigs: Record<string, string> = {};
  for (const id of ids) kubeconfigs[id.cn] = writeKubeconfig(c.certDir, pki, id, url);
  const authorizeCsr = (u: { name: string; groups: string[] }, subresource: string): boolean =>
    authz.authorize({
      user: u,
      verb: 'create',
      resourceRequest: true,
      apiGroup: 'certificates.k8s.io',
      resource: 'certificatesigningrequests',
      subresource,
      namespace: '',
      name: '',
      path: '',
    }).allowed;
  const controllers = await startControllers(
    api,
    {
      nodeIpam,
      authorizeCsr,
      pkiDir: path.dirname(pki.caCert),
      signingDurationSec: c.clusterSigningDurationMs ? Math.round(c.clusterSigningDurationMs / 1000) : undefined,
      localStoragePath: c.localStoragePath,
      controllers: c.controllers ?? ['*'],
      gracePeriodMs: c.nodeMonitorGracePeriodMs,
      monitorPeriodMs: c.nodeMonitorPeriodMs,
      caPem: fs.readFileSync(pki.caCert, 'utf8'),
    },
    createLogger('apiserver', c.log ? { sink: (line) => c.log!(line.replace(/^\S+ /, '')) } : {}),
  );
  // default/kubernetes points at this apiserver, re-checked as upstream's endpoint reconciler does.
  const selfIP = c.advertiseAddress || (c.bindAddress === '0.0.0.0' ? firstIPv4() : c.bindAddress);
  const reconcileSelf = (): void => {
    try {
      reconcileKubernetesEndpoints(api, selfIP, port);
    } catch (e) {
      log(`kubernetes endpoints: ${(e as Error).message}`);
    }
  };
  reconcileSelf();
  // As kubeadm init: kube-public/cluster-info names this apiserver for nodes that join with a token.
  try {
    ensureClusterInfo(
      api,
      fs.readFileSync(pki.caCert, 'utf8'),
      `https://${selfIP.includes(':') ? `[${selfIP}]` : selfIP}:${port}`,
    );
  } catch (e) {
    log(`cluster-info: ${(e as Error).message}`);
  }
  const selfTimer = setInterval(reconcileSelf, 10_000);
  selfTimer.unref();
  const eventTtl = c.eventTtlMs ?? 3600_000;
  const expire = (): void => {
    try {
      expireEvents(api, eventTtl);
    } catch (e) {
      log(`event expiry: ${(e as Error).message}`);
    }
  };
  expire();
  const eventTimer = setInterval(expire, Math.min(60_000, Math.max(1000, eventTtl / 2)));
  eventTimer.unref();
  log(
    `serving on ${url} (storage: ${c.dataDir ? `persistent in ${c.dataDir}` : 'memory'}); admin kubeconfig: ${kubeconfigs[adminIdentity.cn]}`,
  );
  return {
    url,
    port,
    api,
    server,
    controllers,
    kubeconfigs,
    stop: async () => {
      clearInterval(selfTimer);
      clearInterval(eventTimer);
      await controllers.stop();
      await server.close();
      store.close();
    },
  };
}

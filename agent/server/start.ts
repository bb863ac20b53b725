// Brings up the kubelet API on :10250, the local healthz port and log
// rotation, from the kubelet's configuration.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';

import type { KubeApi } from '../../kube/client.js';
import type { Logger } from '../../kube/log.js';
import type { ContainerManager } from '../cm/container-manager.js';
import type { CriClient } from '../cri/client.js';
import type { Kubelet } from '../kubelet.js';
import type { KubeletMetrics } from '../metrics.js';
import { CertificateRotator } from '../node/cert-rotation.js';
import { requestCertificate } from '../node/tls-bootstrap.js';
import { KubeletAuth } from './auth.js';
import { alwaysOk, syncLoopCheck } from './healthz.js';
import { type RunningKubeletServer, startKubeletServer } from './kubelet-server.js';
import { LogRotator } from './log-rotation.js';
import { serveLocal } from './metrics-server.js';
import { loadBootstrappedServingCert, loadServingCert } from './serving-cert.js';
import { StatsProvider } from './stats.js';

/** The configuration fields this needs (a subset of the kubelet's AgentConfig). */
export interface KubeletApiConfig {
  nodeName: string;
  rootDir: string;
  podLogsDir: string;
  port: number;
  address: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  certDir: string;
  clientCAFile: string;
  anonymousAuth: boolean;
  webhookAuthn: boolean;
  webhookAuthnCacheTtlMs: number;
  authorizationMode: 'AlwaysAllow' | 'Webhook';
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  enableDebuggingHandlers: boolean;
  containerLogMaxBytes: number;
  containerLogMaxFiles: number;
  containerLogMonitorIntervalMs: number;
  containerLogMaxWorkers: number;
  healthzPort: number;
  healthzBindAddress: string;
  /** syncFrequency: how often ConfigMap, Secret, downwardAPI and projected volumes are refreshed; also bounds the syncloop health check. */
  syncFrequencyMs: number;
  /** serverTLSBootstrap: get the serving certificate from a kubelet-serving CSR. */
  serverTLSBootstrap?: boolean;
}

export interface KubeletApi {
  server: RunningKubeletServer | undefined;
  rotator: LogRotator;
  stop(): Promise<void>;
}

export async function startKubeletApi(
  kubelet: Kubelet,
  cri: CriClient,
  cfg: KubeletApiConfig,
  o: {
    client?: KubeApi;
    log: Logger;
    metrics: KubeletMetrics;
    hostIP: string;
    hostIPs?: string[];
    configz: () => object;
    cgroups?: ContainerManager;
  },
): Promise<KubeletApi> {
  const { log } = o;
  const rotator = new LogRotator(cri, log, {
    maxBytes: cfg.containerLogMaxBytes,
    maxFiles: cfg.containerLogMaxFiles,
    intervalMs: cfg.containerLogMonitorIntervalMs,
    workers: cfg.containerLogMaxWorkers,
  });
  rotator.start();
  const closers: (() => Promise<void>)[] = [];
  const healthChecks = [
    alwaysOk('ping'),
    alwaysOk('log'),
    syncLoopCheck(() => kubelet.pleg.enteredAt, cfg.syncFrequencyMs),
  ];
  if (cfg.healthzPort > 0) {
    const h = await serveLocal(`${cfg.healthzBindAddress}:${cfg.healthzPort}`, { healthChecks }).catch((e: Error) =>
      log.error(`healthz port ${cfg.healthzBindAddress}:${cfg.healthzPort}: ${e.message}`),
    );
    if (h) closers.push(h.close);
  }
  const api: KubeletApi = {
    server: undefined,
    rotator,
    stop: async () => {
      rotator.stop();
      await api.server?.close();
      for (const c of closers) await c();
    },
  };
  if (cfg.port === 0) return api;
  const clientCA = cfg.clientCAFile ? readFile(cfg.clientCAFile, '--client-ca-file') : undefined;
  // serverTLSBootstrap (as upstream): the certificate from a kubelet-serving CSR; self-signed until one is issued.
  const bootstrapServing = !!cfg.serverTLSBootstrap && !!o.client && !cfg.tlsCertFile;
  const issued = bootstrapServing ? loadBootstrappedServingCert(cfg.certDir) : undefined;
  const cert =
    issued ??
    (await loadServingCert({
      certFile: cfg.tlsCertFile,
      keyFile: cfg.tlsPrivateKeyFile,
      certDir: cfg.certDir,
      hostnames: [cfg.nodeName, os.hostname()],
      ips: [...(o.hostIPs ?? [o.hostIP]), '127.0.0.1'],
    }));
  if (cfg.authorizationMode === 'Webhook' && !o.client)
    log.warn(
      'authorization mode Webhook without a kubeconfig: the kubelet API will refuse every request (set authorization.mode: AlwaysAllow for a standalone kubelet)',
    );
  const auth = new KubeletAuth({
    anonymous: cfg.anonymousAuth,
    webhookAuthn: cfg.webhookAuthn,
    tokenCacheTtlMs: cfg.webhookAuthnCacheTtlMs,
    mode: cfg.authorizationMode,
    authorizedTtlMs: cfg.authorizedTtlMs,
    unauthorizedTtlMs: cfg.unauthorizedTtlMs,
    client: o.client,
  });
  const host = {
    nodeName: cfg.nodeName,
    cri,
    podLogsDir: cfg.podLogsDir,
    log,
    metrics: o.metrics,
    pods: () => kubelet.desiredPods(),
    waitingReason: (uid: string, c: string) => kubelet.waitingReason(uid, c),
    configz: o.configz,
    healthChecks,
  };
  const listen = async (attempt: number): Promise<void> => {
    try {
      api.server = await startKubeletServer({
        host,
        auth,
        stats: new StatsProvider(cri, cfg.nodeName, cfg.rootDir, { podLogsDir: cfg.podLogsDir, cgroups: o.cgroups }),
        cert,
        clientCA,
        address: cfg.address,
        port: cfg.port,
        enableDebuggingHandlers: cfg.enableDebuggingHandlers,
      });
      log.info(
        `kubelet API serving on https://${cfg.address}:${api.server.port} (authorization ${cfg.authorizationMode}, anonymous ${cfg.anonymousAuth ? 'allowed' : 'refused'})`,
      );
    } catch (e) {
      // Pods keep running without the API; try again rather than exit.
      log.error(`kubelet API on ${cfg.address}:${cfg.port}: ${(e as Error).message}; retrying`);
      setTimeout(() => void listen(attempt + 1), Math.min(1000 * 2 ** attempt, 10_000)).unref();
    }
  };
  await listen(0);
  if (bootstrapServing) {
    // A serving CSR waits for a human (kubectl certificate approve), possibly long: nothing waits on this.
    const sans = [...new Set([cfg.nodeName, os.hostname()])]
      .map((h) => `DNS:${h}`)
      .concat([...new Set(o.hostIPs ?? [o.hostIP])].filter((i) => net.isIP(i)).map((i) => `IP:${i}`));
    const request = async (): Promise<void> => {
      await requestCertificate(
        o.client!,
        {
          nodeName: cfg.nodeName,
          certDir: cfg.certDir,
          kind: 'server',
          sans,
          timeoutMs: 365 * 86400_000,
          pollMs: 5000,
        },
        log,
      );
      const c = loadBootstrappedServingCert(cfg.certDir);
      if (c) api.server?.setCertificate(c);
      log.info('kubelet API: serving the certificate issued for the kubelet-serving CSR');
    };
    // Renewed at 70-90 % of its lifetime through a new kubelet-serving CSR, as upstream's serving certificate manager.
    const rotation = new CertificateRotator(
      {
        what: 'serving certificate',
        current: () => {
          const c = loadBootstrappedServingCert(cfg.certDir);
          return c ? new X509Certificate(c.cert) : undefined;
        },
        renew: request,
        // Until one is issued, the self-signed certificate is served and the CSR is retried with backoff.
        missingIsDue: true,
      },
      log,
    );
    closers.push(async () => rotation.stop());
    rotation.start();
  }
  return api;
}

function readFile(f: string, flag: string): Buffer {
  try {
    return fs.readFileSync(f);
  } catch (e) {
    throw new Error(`${flag} ${f}: ${(e as Error).message}`, { cause: e });
  }
}

// For tests: a dev apiserver on a free loopback port in a temp dir, with
// clients for admin and for one node. Agent tests use it as a stand-in for a
// real apiserver; agent code itself never imports apiserver/.
import fs from 'node:fs';
import type { ClientRequest, IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';

import { newTokenSecret } from '../apiserver/bootstrap/tokens.js';
import { type ApiServerConfig, type RunningApiServer, startApiServer } from '../apiserver/main.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';

export interface TestApiServer {
  srv: RunningApiServer;
  admin: KubeClient;
  node: KubeClient;
  stop(): Promise<void>;
}

/** Controllers are off unless asked for, so tests see only what they do themselves; but every namespace has its default ServiceAccount and kube-root-ca.crt, which pods' kube-api-access volumes need. */
export async function startTestApiServer(
  nodeName = 'n1',
  extra: Partial<ApiServerConfig> = {},
): Promise<TestApiServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-testapi-'));
  const srv = await startApiServer({
    certDir: dir,
    bindAddress: '127.0.0.1',
    securePort: 0,
    advertiseAddress: '',
    serviceClusterIpRange: '10.96.0.0/12',
    nodeNames: [nodeName],
    controllers: ['serviceaccount-controller', 'root-ca-certificate-publisher-controller'],
    log: () => {},
    ...extra,
  });
  const admin = new KubeClient(loadKubeconfig(srv.kubeconfigs['kubernetes-admin']!));
  const node = new KubeClient(loadKubeconfig(srv.kubeconfigs[`system:node:${nodeName}`]!));
  return {
    srv,
    admin,
    node,
    stop: async () => {
      admin.close();
      node.close();
      await srv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One test apiserver for a whole test file (before/after hooks); `node` is the client tests act as. */
export function useTestApiServer(
  nodeName = 'n1',
  extra: Partial<ApiServerConfig> = {},
): { readonly api: TestApiServer; readonly node: KubeClient } {
  let api: TestApiServer | undefined;
  before(async () => {
    api = await startTestApiServer(nodeName, extra);
  });
  after(() => api?.stop());
  return {
    get api() {
      return api!;
    },
    get node() {
      return api!.node;
    },
  };
}

export interface RawReply {
  code: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  req: ClientRequest;
}

/** A raw request as the admin (bodies as given: a string goes out byte for byte), resolving as soon as the headers arrive when `headersOnly`. */
export function rawRequest(
  api: TestApiServer,
  method: string,
  path: string,
  o: {
    body?: unknown;
    contentType?: string;
    accept?: string;
    headersOnly?: boolean;
    headers?: Record<string, string>;
    noClientCert?: boolean;
  } = {},
): Promise<RawReply> {
  const auth = loadKubeconfig(api.srv.kubeconfigs['kubernetes-admin']!);
  const body =
    o.body === undefined ? undefined : Buffer.from(typeof o.body === 'string' ? o.body : JSON.stringify(o.body));
  const headers: Record<string, string | number> = body
    ? { 'Content-Type': o.contentType ?? 'application/json', 'Content-Length': body.length }
    : {};
  if (o.accept) headers.Accept = o.accept;
  Object.assign(headers, o.headers);
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${api.srv.url}${path}`,
      { method, ...(o.noClientCert ? {} : { cert: auth.cert, key: auth.key }), ca: auth.ca, headers },
      (res) => {
        const done = (b: Buffer) =>
          resolve({ code: res.statusCode ?? 0, headers: res.headers, body: b, text: b.toString('utf8'), req });
        if (o.headersOnly) return done(Buffer.alloc(0));
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(Buffer.concat(chunks)));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A kubeadm-style bootstrap kubeconfig for `api` holding a new bootstrap token (whose Secret it creates); its path. */
export async function writeBootstrapKubeconfig(api: TestApiServer, file: string): Promise<string> {
  const { token, secret } = newTokenSecret();
  await api.admin.create('/api/v1/namespaces/kube-system/secrets', secret);
  const admin = loadKubeconfig(api.srv.kubeconfigs['kubernetes-admin']!);
  const cluster = { server: admin.server, 'certificate-authority-data': admin.ca!.toString('base64') };
  fs.writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kubernetes', cluster }],
      contexts: [
        {
          name: 'tls-bootstrap-token-user@kubernetes',
          context: { cluster: 'kubernetes', user: 'tls-bootstrap-token-user' },
        },
      ],
      'current-context': 'tls-bootstrap-token-user@kubernetes',
      users: [{ name: 'tls-bootstrap-token-user', user: { token } }],
    }),
  );
  return file;
}

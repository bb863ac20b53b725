// A small Kubernetes REST client over node:https: JSON requests with
// metav1.Status errors, and watch streams as async iterators.
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';

import type { ClusterAuth } from './kubeconfig.js';

export type KObj = Record<string, any>;

export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly status?: KObj,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KObj;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

type Query = Record<string, string | number | boolean | undefined>;

/** What agents and controllers need from an apiserver; KubeClient speaks it over HTTPS. */
export interface KubeApi {
  get(path: string, query?: Query): Promise<KObj>;
  create(path: string, body: unknown): Promise<KObj>;
  update(path: string, body: unknown): Promise<KObj>;
  patch(path: string, body: unknown, type?: 'merge' | 'strategic' | 'json'): Promise<KObj>;
  delete(path: string, body?: unknown, query?: Query): Promise<KObj>;
  watch(path: string, query: Query | undefined, signal?: AbortSignal): AsyncGenerator<WatchEvent>;
}

export class KubeClient implements KubeApi {
  private agent: https.Agent;
  private readonly url: URL;

  constructor(private auth: ClusterAuth) {
    this.url = new URL(auth.server);
    this.agent = KubeClient.agentFor(auth);
  }

  private static agentFor(auth: ClusterAuth): https.Agent {
    return new https.Agent({
      keepAlive: true,
      maxSockets: 16,
      ca: auth.ca,
      cert: auth.cert,
      key: auth.key,
      rejectUnauthorized: !auth.insecureSkipTLSVerify,
      servername: auth.tlsServerName,
    });
  }

  /** New credentials (a rotated client certificate). As upstream, open connections are closed so that every request, watches included, reconnects with them. */
  setCredentials(auth: ClusterAuth): void {
    const old = this.agent;
    this.auth = auth;
    this.agent = KubeClient.agentFor(auth);
    old.destroy();
  }

  close(): void {
    this.agent.destroy();
  }

  private headers(contentType?: string): Record<string, string> {
    const h: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'tskube/0.1' };
    const token = this.auth.tokenFile ? fs.readFileSync(this.auth.tokenFile, 'utf8').trim() : this.auth.token;
    if (token) h.Authorization = `Bearer ${token}`;
    if (contentType) h['Content-Type'] = contentType;
    return h;
  }

  private open(method: string, path: string, o: RequestOptions): Promise<IncomingMessage> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const body = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          agent: this.agent,
          protocol: this.url.protocol,
          hostname: this.url.hostname,
          port: this.url.port || 443,
          method,
          path: `${path}${qs.size ? `?${qs.toString()}` : ''}`,
          headers: {
            ...this.headers(body ? (o.contentType ?? 'application/json') : undefined),
            ...(body ? { 'Content-Length': String(body.length) } : {}),
          },
          signal: o.signal,
          timeout: o.timeoutMs ?? 30_000,
        },
        resolve,
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  async request<T = KObj>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const res = await this.open(method, path, o);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let parsed: KObj | undefined;
    try {
      parsed = text ? (JSON.parse(text) as KObj) : undefined;
    } catch {
      parsed = undefined;
    }
    const code = res.statusCode ?? 0;
    if (code < 200 || code >= 300) {
      throw new KubeApiError(
        code,
        parsed?.reason ?? 'Unknown',
        `${method} ${path}: ${parsed?.message ?? (text.slice(0, 200) || `HTTP ${code}`)}`,
        parsed,
      );
    }
    return parsed as T;
  }

  get = (path: string, query?: RequestOptions['query']) => this.request('GET', path, { query });
  create = (path: string, body: unknown) => this.request('POST', path, { body });
  update = (path: string, body: unknown) => this.request('PUT', path, { body });
  patch = (path: string, body: unknown, type: 'merge' | 'strategic' | 'json' = 'strategic') =>
    this.request('PATCH', path, {
      body,
      contentType:
        type === 'merge'
          ? 'application/merge-patch+json'
          : type === 'json'
            ? 'application/json-patch+json'
            : 'application/strategic-merge-patch+json',
    });
  delete = (path: string, body?: unknown, query?: RequestOptions['query']) =>
    this.request('DELETE', path, { body, query });

  /** A watch stream; ends when the server closes it or the signal aborts. */
  async *watch(path: string, query: RequestOptions['query'], signal?: AbortSignal): AsyncGenerator<WatchEvent> {
    const res = await this.open('GET', path, { query: { ...query, watch: 1 }, signal, timeoutMs: 0 });
    if ((res.statusCode ?? 0) !== 200) {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      let st: KObj | undefined;
      try {
        st = JSON.parse(Buffer.concat(chunks).toString()) as KObj;
      } catch {
        st = undefined;
      }
      throw new KubeApiError(
        res.statusCode ?? 0,
        st?.reason ?? 'Unknown',
        `watch ${path}: ${st?.message ?? `HTTP ${res.statusCode}`}`,
        st,
      );
    }
    res.setEncoding('utf8');
    let buf = '';
    try {
      for await (const chunk of res) {
        buf += chunk as string;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) yield JSON.parse(line) as WatchEvent;
        }
      }
    } finally {
      res.destroy();
    }
  }
}

// pods/log, pods/exec, pods/attach and pods/portforward: the apiserver finds
// the pod's node and talks to its kubelet on daemonEndpoints.kubeletEndpoint
// (:10250) with its kubelet client certificate, as kube-apiserver does. Logs
// are a streamed GET (or a WebSocket, log-websocket.ts); the others are
// upgraded connections: SPDY and older WebSocket protocols are piped both ways,
// v4 and v5 WebSocket are translated to the kubelet's SPDY (stream-translator.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';

import { SpdyDialError } from '../../kube/spdy.js';
import { answerUpgrade, spliceUpgrade } from '../../kube/upgrade-proxy.js';
import type { Api } from '../api/api.js';
import { ApiError, errors } from '../api/errors.js';
import type { Obj } from '../storage/store.js';
import { logProtocol, streamLogOverWebSocket } from './log-websocket.js';
import { boolParam } from './query.js';
import {
  chooseProtocol,
  PORTFORWARD_TUNNEL,
  translateExec,
  translatePortForward,
  tunnelPortForward,
  V4,
  V5,
} from './stream-translator.js';

export interface KubeletClientCert {
  cert: Buffer;
  key: Buffer;
}

interface Target {
  host: string;
  port: number;
  pod: Obj;
  container: string;
}

/** kubectl's exec/attach query (stdin, stdout, stderr, tty) in the kubelet's names (input, output, error, tty). */
const STREAM_PARAMS: Record<string, string> = { stdin: 'input', stdout: 'output', stderr: 'error', tty: 'tty' };
const LOG_PARAMS = ['follow', 'previous', 'timestamps', 'tailLines', 'limitBytes', 'sinceSeconds', 'sinceTime'];

export class KubeletProxy {
  constructor(
    private readonly api: Api,
    readonly client: KubeletClientCert,
  ) {}

  /** The pod's node address and kubelet port, and the container to use (validated). */
  private target(ns: string, name: string, container: string | null, needContainer: boolean): Target {
    const pod = this.api.get(this.api.res('', 'pods'), ns, name);
    const names = ((pod.spec?.containers ?? []) as Obj[]).map((c) => c.name as string);
    const all = [
      ...names,
      ...[...((pod.spec?.initContainers ?? []) as Obj[]), ...((pod.spec?.ephemeralContainers ?? []) as Obj[])].map(
        (c) => c.name as string,
      ),
    ];
    let c = container ?? '';
    if (needContainer && !c) {
      if (names.length !== 1)
        throw errors.badRequest(
          `a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`,
        );
      c = names[0]!;
    }
    if (c && !all.includes(c)) throw errors.badRequest(`container ${c} is not valid for pod ${name}`);
    const nodeName = pod.spec?.nodeName as string | undefined;
    if (!nodeName) throw errors.badRequest(`pod ${name} does not have a host assigned`);
    const node = this.api.get(this.api.res('', 'nodes'), '', nodeName);
    const addrs = (node.status?.addresses ?? []) as Obj[];
    const host = (addrs.find((a) => a.type === 'InternalIP') ?? addrs.find((a) => a.type === 'Hostname') ?? {})
      .address as string | undefined;
    if (!host) throw errors.badRequest(`no address found for node ${nodeName}`);
    return { host, port: node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 10250, pod, container: c };
  }

  /** GET pods/{name}/log: streams /containerLogs from the kubelet. */
  logs(res: ServerResponse, ns: string, name: string, q: URLSearchParams): void {
    this.containerLogs(ns, name, q, {
      onLog: (kres) => {
        res.writeHead(kres.statusCode ?? 502, {
          'Content-Type': String(kres.headers['content-type'] ?? 'text/plain'),
          'Cache-Control': 'no-cache, private',
        });
        kres.pipe(res);
        res.on('close', () => kres.destroy());
      },
      onError: (err) => {
        if (res.headersSent) return void res.destroy();
        res.writeHead(err.code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(err.toStatus()));
      },
    });
  }

  /** pods/{name}/log asked for over a WebSocket (log-websocket.ts). */
  logsUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, ns: string, name: string, q: URLSearchParams): void {
    if (logProtocol(req.headers['sec-websocket-protocol']) === undefined)
      return rejectUpgrade(
        socket,
        errors.badRequest(
          `unable to upgrade: the requested WebSocket protocols (${String(req.headers['sec-websocket-protocol'])}) are not supported for log`,
        ),
      );
    try {
      this.containerLogs(ns, name, q, {
        onLog: (kres) => streamLogOverWebSocket(req, socket, head, kres),
        onError: (err) => rejectUpgrade(socket, err),
      });
    } catch (e) {
      rejectUpgrade(socket, e instanceof ApiError ? e : errors.internal((e as Error).message));
    }
  }

  /** Asks the pod's kubelet for /containerLogs; a refusal or a dial error arrives as a Status error. */
  private containerLogs(
    ns: string,
    name: string,
    q: URLSearchParams,
    on: { onLog: (kres: IncomingMessage) => void; onError: (err: ApiError) => void },
  ): void {
    const t = this.target(ns, name, q.get('container'), true);
    const qs = new URLSearchParams();
    for (const k of LOG_PARAMS) if (q.has(k)) qs.set(k, q.get(k)!);
    const path = `/containerLogs/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/${encodeURIComponent(t.container)}${qs.size ? `?${qs.toString()}` : ''}`;
    const up = https.request(
      {
        host: t.host,
        port: t.port,
        path,
        method: 'GET',
        cert: this.client.cert,
        key: this.client.key,
        rejectUnauthorized: false,
      },
      (kres) => {
        const code = kres.statusCode ?? 502;
        if (code < 200 || code > 299) return void readError(kres, code, on.onError);
        on.onLog(kres);
      },
    );
    up.on('error', (e) => on.onError(errors.internal(`Get "https://${t.host}:${t.port}${path}": ${e.message}`)));
    up.end();
  }

  /** exec, attach, portforward: an upgraded connection from the client, spliced to the kubelet's. */
  upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    ns: string,
    name: string,
    sub: string,
    q: URLSearchParams,
  ): void {
    const websocket = String(req.headers.upgrade ?? '').toLowerCase() === 'websocket';
    const protocol = websocket ? chooseProtocol(req) : undefined;
    // v5 exec/attach and port-forward's tunnel are translated to the kubelet's SPDY, as kube-apiserver does, and so is
    // v4; any other WebSocket (channel.k8s.io) goes to the kubelet as it came, and the runtime answers it.
    const translate =
      protocol !== undefined && (sub === 'portforward' ? protocol !== V5 : protocol !== PORTFORWARD_TUNNEL);
    // The options parse as Go's ParseBool (the Python client sends stdin=True).
    let flag: (k: string) => boolean;
    let t: Target;
    try {
      flag = (k: string) => boolParam(q, k);
      for (const k of Object.keys(STREAM_PARAMS)) flag(k);
      t = this.target(ns, name, q.get('container'), sub !== 'portforward');
    } catch (e) {
      return rejectUpgrade(socket, e instanceof ApiError ? e : errors.internal((e as Error).message));
    }
    const qs = new URLSearchParams();
    if (sub === 'portforward') {
      for (const p of q.getAll('ports')) qs.append('port', p);
    } else {
      for (const c of q.getAll('command')) qs.append('command', c);
      for (const [k, v] of Object.entries(STREAM_PARAMS)) if (flag(k)) qs.set(v, '1');
    }
    const kubeletPath = sub === 'portforward' ? `/portForward/${ns}/${name}` : `/${sub}/${ns}/${name}/${t.container}`;
    const url = new URL(
      `https://${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}${kubeletPath.split('/').map(encodeURIComponent).join('/')}${qs.size ? `?${qs.toString()}` : ''}`,
    );
    if (!translate) {
      spliceUpgrade(req, socket, head, {
        url,
        cert: this.client.cert,
        key: this.client.key,
        onDialError: (e) => rejectUpgrade(socket, errors.internal(`error dialing backend: ${e.message}`)),
      });
      return;
    }
    const dial = { url, cert: this.client.cert, key: this.client.key };
    const ports = q
      .getAll('ports')
      .flatMap((p) => p.split(','))
      .map(Number);
    if (
      sub === 'portforward' &&
      protocol === V4 &&
      (!ports.length || ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535))
    ) {
      return rejectUpgrade(socket, errors.badRequest(`invalid port in ${JSON.stringify(q.getAll('ports'))}`));
    }
    const done =
      sub === 'portforward'
        ? protocol === PORTFORWARD_TUNNEL
          ? tunnelPortForward(req, socket, head, dial)
          : translatePortForward(req, socket, head, dial, ports)
        : translateExec(req, socket, head, dial, {
            stdin: flag('stdin'),
            stdout: flag('stdout'),
            stderr: flag('stderr'),
            tty: flag('tty'),
          });
    done.catch((e: Error) => {
      if (e instanceof SpdyDialError)
        rejectUpgrade(socket, new ApiError(e.code, REASONS[e.code] ?? 'InternalError', e.body));
      else rejectUpgrade(socket, errors.internal(`error dialing backend: ${e.message}`));
    });
  }
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/** A kubelet error (plain text) becomes a Status with its text as the message, as upstream's log streamer does. */
function readError(kres: IncomingMessage, code: number, done: (err: ApiError) => void): void {
  const chunks: Buffer[] = [];
  let n = 0;
  kres.on('data', (b: Buffer) => {
    if (n < 4096) chunks.push(b);
    n += b.length;
  });
  kres.on('end', () =>
    done(
      new ApiError(
        code,
        REASONS[code] ?? 'InternalError',
        Buffer.concat(chunks).toString('utf8').slice(0, 4096).trim(),
      ),
    ),
  );
}

/** A Status answer on a connection that asked to be upgraded. */
export function rejectUpgrade(socket: Duplex, err: ApiError): void {
  answerUpgrade(socket, err.code, 'application/json', JSON.stringify(err.toStatus()));
}

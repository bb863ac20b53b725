// /exec, /attach and /portForward: the kubelet asks the runtime (CRI Exec,
// Attach, PortForward) for a URL on its streaming server and splices the
// client's upgraded connection (SPDY or WebSocket) to it, as upstream does
// with redirect-container-streaming off. The runtime then speaks the
// remotecommand or portforward protocol with the client directly.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

import { answerUpgrade, spliceUpgrade } from '../../kube/upgrade-proxy.js';
import { CriError } from '../cri/client.js';
import { findPod, HttpError, readySandbox, runningContainer, type ServerHost } from './host.js';

export interface StreamRoute {
  kind: 'exec' | 'attach' | 'portForward';
  ns: string;
  pod: string;
  uid?: string;
  container?: string;
}

/** /exec/{ns}/{pod}[/{uid}]/{container}, /attach/…, /portForward/{ns}/{pod}[/{uid}] */
export function parseStreamPath(parts: string[]): StreamRoute | undefined {
  const [kind, ns, pod, a, b, ...rest] = parts;
  if (rest.length || !ns || !pod) return undefined;
  if (kind === 'portForward') return b === undefined ? { kind, ns, pod, uid: a } : undefined;
  if (kind !== 'exec' && kind !== 'attach') return undefined;
  if (!a) return undefined;
  return b === undefined ? { kind, ns, pod, container: a } : { kind, ns, pod, uid: a, container: b };
}

const flag = (q: URLSearchParams, k: string): boolean => ['1', 'true', 'True', 'TRUE', 't'].includes(q.get(k) ?? '');

/** Asks the runtime for the streaming URL of one request. */
export async function streamingUrl(host: ServerHost, r: StreamRoute, q: URLSearchParams): Promise<URL> {
  const pod = findPod(host, r.ns, r.pod, r.uid);
  if (!pod) throw new HttpError(404, 'pod does not exist');
  const label = `${r.ns}/${r.pod}`;
  let raw: string;
  if (r.kind === 'portForward') {
    const ports = q.getAll('port').map(Number);
    if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535))
      throw new HttpError(400, `invalid port in ${JSON.stringify(q.getAll('port'))}`);
    raw = await host.cri.portForward(await readySandbox(host, pod), ports, label);
  } else {
    const tty = flag(q, 'tty');
    const stdin = flag(q, 'input');
    const stdout = flag(q, 'output');
    // With a TTY, stderr is merged into stdout by the terminal (upstream drops it too).
    const stderr = flag(q, 'error') && !tty;
    if (!stdin && !stdout && !stderr) throw new HttpError(400, 'you must specify at least 1 of stdin, stdout, stderr');
    const c = await runningContainer(host, pod, r.container!);
    if (r.kind === 'exec') {
      const cmd = q.getAll('command');
      if (!cmd.length) throw new HttpError(400, 'you must specify at least one command for the container');
      raw = await host.cri.exec({ container_id: c.id, cmd, tty, stdin, stdout, stderr }, label);
    } else raw = await host.cri.attach({ container_id: c.id, tty, stdin, stdout, stderr }, label);
  }
  const url = new URL(raw);
  // WebSocket port-forward names its ports in the query; the runtime reads them from there.
  if (!url.search && r.kind === 'portForward' && q.size) url.search = q.toString();
  return url;
}

export async function serveStream(
  host: ServerHost,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  r: StreamRoute,
  q: URLSearchParams,
): Promise<void> {
  let url: URL;
  try {
    url = await streamingUrl(host, r, q);
  } catch (e) {
    const code = e instanceof HttpError ? e.code : e instanceof CriError && e.notFound ? 404 : 500;
    return answerUpgrade(socket, code, 'text/plain; charset=utf-8', `${(e as Error).message}\n`);
  }
  host.log.debug(`${r.kind} ${r.ns}/${r.pod}${r.container ? `/${r.container}` : ''}: proxying to ${url.origin}`);
  spliceUpgrade(req, socket, head, {
    url,
    onDialError: (e) =>
      answerUpgrade(
        socket,
        500,
        'text/plain; charset=utf-8',
        `error dialing the runtime's streaming server: ${e.message}\n`,
      ),
  });
}

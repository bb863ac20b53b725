// httpGet probes as upstream pkg/probe/http: GET with kube-probe headers,
// redirects followed only to the same host (at most 10), the body read up to
// 10 KiB, 200 <= code < 400 is success, and a redirect left unfollowed is a
// Warning (which counts as success).
import http from 'node:http';
import https from 'node:https';

import { clampDelay } from '../../kube/timers.js';
import type { ProbeOutcome } from './types.js';

export const MAX_BODY = 10 * 1024;
const MAX_REDIRECTS = 10;

export interface HttpProbeRequest {
  url: URL;
  headers: Record<string, string>;
  timeoutMs: number;
}

interface Response {
  code: number;
  location?: string;
  body: string;
}

const insecureAgent = new https.Agent({ rejectUnauthorized: false, keepAlive: false });

function once(url: URL, headers: Record<string, string>, deadline: number): Promise<Response> {
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const left = deadline - Date.now();
    if (left <= 0)
      return reject(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)'));
    // No keep-alive, as upstream's probe transport: every probe is a fresh connection.
    const req = mod.request(
      url,
      { method: 'GET', headers, agent: url.protocol === 'https:' ? insecureAgent : false },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < MAX_BODY) chunks.push(c.subarray(0, MAX_BODY - size));
          size += c.length;
          if (size >= MAX_BODY) res.destroy(); // enough; upstream reads at most 10 KiB
        });
        const done = (): void =>
          resolve({
            code: res.statusCode ?? 0,
            location: res.headers.location,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(
      () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')),
      clampDelay(left),
    );
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.on('close', () => clearTimeout(timer));
    req.end();
  });
}

/** Go's error text for common dial failures, so messages read like upstream's. */
function describe(url: URL, e: Error & { code?: string }): string {
  const addr = `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
  const dial =
    e.code === 'ECONNREFUSED'
      ? `dial tcp ${addr}: connect: connection refused`
      : e.code === 'EHOSTUNREACH'
        ? `dial tcp ${addr}: connect: no route to host`
        : e.message;
  return `Get "${url.href}": ${dial}`;
}

export async function httpProbe(r: HttpProbeRequest): Promise<ProbeOutcome> {
  const deadline = Date.now() + r.timeoutMs;
  let url = r.url;
  let res: Response | undefined;
  for (let hop = 0; ; hop++) {
    try {
      res = await once(url, r.headers, deadline);
    } catch (e) {
      return { result: 'failure', output: describe(url, e as Error) };
    }
    if (res.code < 300 || res.code >= 400 || !res.location) break;
    const next = new URL(res.location, url);
    // followNonLocalRedirects=false: another host ends the chain with this 3xx.
    if (next.hostname !== r.url.hostname) break;
    if (hop + 1 >= MAX_REDIRECTS)
      return { result: 'failure', output: `Get "${next.href}": stopped after ${MAX_REDIRECTS} redirects` };
    url = next;
  }
  if (res.code >= 200 && res.code < 300) return { result: 'success', output: res.body };
  if (res.code >= 300 && res.code < 400)
    return { result: 'warning', output: `Probe terminated redirects, Response body: ${res.body}` };
  return { result: 'failure', output: `HTTP probe failed with statuscode: ${res.code}` };
}

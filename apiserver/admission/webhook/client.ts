// Posting an AdmissionReview to a webhook: by URL, or by Service, dialled at the Service's ClusterIP under its DNS
// name (`<name>.<namespace>.svc`, as kube-apiserver's default service resolver; the name is what TLS verifies).
import type { LookupAddress } from 'node:dns';
import https from 'node:https';

import type { WebhookClientConfig } from 'kubernetes-types/admissionregistration/v1.js';

/** The ClusterIP of a Service, or why there is none. */
export type ServiceResolver = (namespace: string, name: string) => string;

export class WebhookCallError extends Error {}

/** The URL the review is posted to, with the `timeout` query parameter upstream adds. */
export function webhookUrl(cc: WebhookClientConfig, timeoutSeconds: number): string {
  let base: string;
  if (cc.service) {
    const { name, namespace, path = '', port = 443 } = cc.service;
    base = `https://${name}.${namespace}.svc:${port}${path}`;
  } else base = cc.url ?? '';
  return `${base}${base.includes('?') ? '&' : '?'}timeout=${timeoutSeconds}s`;
}

/** Posts `body`; resolves the parsed answer, rejects with Go's client error wording (`Post "<url>": <why>`). */
export function postReview(
  cc: WebhookClientConfig,
  body: unknown,
  timeoutSeconds: number,
  resolve: ServiceResolver,
): Promise<unknown> {
  const url = webhookUrl(cc, timeoutSeconds);
  const fail = (why: string): WebhookCallError => new WebhookCallError(`Post "${url}": ${why}`);
  let ip: string | undefined;
  if (cc.service) {
    try {
      ip = resolve(cc.service.namespace, cc.service.name);
    } catch (e) {
      return Promise.reject(fail((e as Error).message));
    }
  }
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((done, reject) => {
    const req = https.request(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': payload.length },
      ...(cc.caBundle ? { ca: Buffer.from(cc.caBundle, 'base64').toString('utf8') } : {}),
      agent: false,
      ...(ip
        ? {
            lookup: (
              _host: string,
              opts: { all?: boolean },
              cb: (e: Error | null, a: string | LookupAddress[], f?: number) => void,
            ) => (opts.all ? cb(null, [{ address: ip, family: 4 }]) : cb(null, ip, 4)),
          }
        : {}),
    });
    const timer = setTimeout(() => {
      req.destroy(fail('context deadline exceeded'));
    }, timeoutSeconds * 1000);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e instanceof WebhookCallError ? e : fail(e.message));
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e) => req.destroy(e));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code > 299)
          return reject(
            fail(
              `an error on the server (${JSON.stringify(text.slice(0, 200))}) has prevented the request from succeeding`,
            ),
          );
        try {
          done(JSON.parse(text));
        } catch (e) {
          reject(fail(`the answer is not JSON: ${(e as Error).message}`));
        }
      });
    });
    req.end(payload);
  });
}

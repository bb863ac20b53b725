// Static pod source from a URL (--manifest-url / staticPodURL), as upstream
// config/http.go: GET every httpCheckFrequency (20 s) with a 10 s timeout and
// the configured headers; a non-200 answer is an error that keeps the last
// SET; an empty body is an empty SET; an unchanged body is skipped. The body
// is one Pod or a PodList, YAML or JSON.
import type { Pod } from 'kubernetes-types/core/v1.js';

import { md5Hex } from '../../kube/hash.js';
import type { Logger } from '../../kube/log.js';
import { FirstSeen } from './first-seen.js';
import { MAX_MANIFEST_BYTES, parseManifest } from './manifest.js';

export interface HttpSourceOptions {
  url: string;
  /** staticPodURLHeader: header name -> values. */
  headers?: Record<string, string[]>;
  nodeName: string;
  checkFrequencyMs?: number;
  timeoutMs?: number;
  log: Logger;
  onSet: (pods: Pod[]) => void;
}

export class HttpSource {
  private readonly seen = new FirstSeen();
  private timer: NodeJS.Timeout | undefined;
  private lastDigest: string | undefined;
  private lastError = '';
  private stopped = false;

  constructor(private readonly o: HttpSourceOptions) {}

  /** First fetch, then the periodic ones. Resolves even if the first fetch fails (the kubelet must not wait on it). */
  async start(): Promise<void> {
    await this.poll();
    const tick = (): void => {
      this.timer = setTimeout(
        () => void this.poll().finally(() => !this.stopped && tick()),
        this.o.checkFrequencyMs ?? 20_000,
      );
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  async poll(): Promise<void> {
    try {
      const body = await this.fetch();
      const digest = md5Hex(body.toString('latin1'));
      this.lastError = '';
      if (digest === this.lastDigest) return;
      this.lastDigest = digest;
      const res = parseManifest(body, this.o.url, 'http', this.o.nodeName);
      for (const err of res.errors) this.o.log.error(`static pod manifest rejected: ${err}`);
      this.o.onSet(this.seen.stamp(res.pods));
    } catch (e) {
      const msg = `${this.o.url}: ${(e as Error).message}`;
      // One line per distinct failure, not one every 20 s.
      if (msg !== this.lastError) this.o.log.error(`static pod manifest URL failed, keeping the last pods: ${msg}`);
      this.lastError = msg;
    }
  }

  private async fetch(): Promise<Buffer> {
    const headers = new Headers();
    for (const [k, vs] of Object.entries(this.o.headers ?? {})) for (const v of vs) headers.append(k, v);
    const res = await fetch(this.o.url, {
      headers,
      signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
      redirect: 'follow',
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status} ${res.statusText}`);
    const body = Buffer.from(await res.arrayBuffer());
    if (body.length > MAX_MANIFEST_BYTES)
      throw new Error(`body is ${body.length} bytes, larger than the ${MAX_MANIFEST_BYTES}-byte limit`);
    return body;
  }
}

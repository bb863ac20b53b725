// An in-process KubeApi over Api: the built-in controllers use it, so they are
// written against the same interface (and informers) as any out-of-process
// client, without HTTPS in between. Errors become KubeApiErrors.
import { type KObj, type KubeApi, KubeApiError, type WatchEvent } from '../../kube/client.js';
import type { Obj } from '../storage/store.js';
import { SYSTEM_USER, type User } from './admission.js';
import { type Api, writeSubOf } from './api.js';
import { ApiError } from './errors.js';
import { parseResourcePath, type Route } from './paths.js';

type Query = Record<string, string | number | boolean | undefined>;

export class LocalClient implements KubeApi {
  constructor(
    private readonly api: Api,
    private readonly user: User = SYSTEM_USER,
  ) {}

  private route(path: string): Route & { ns: string } {
    const r = parseResourcePath(path.split('/').filter(Boolean).map(decodeURIComponent), this.api.resources);
    if (!r) throw new KubeApiError(404, 'NotFound', `${path}: the server could not find the requested resource`);
    return { ...r, ns: r.namespace ?? '' };
  }

  /** Runs one Api call as this client's user; ApiErrors become KubeApiErrors, as over HTTP. */
  private call<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(this.api.runAs(this.user, fn));
    } catch (e) {
      if (e instanceof ApiError) return Promise.reject(new KubeApiError(e.code, e.reason, e.message, e.toStatus()));
      return Promise.reject(e as Error);
    }
  }

  get(path: string, query: Query = {}): Promise<KObj> {
    const { r, ns, name, namespace } = this.route(path);
    return this.call(() =>
      name
        ? this.api.get(r, ns, name)
        : this.api.list(r, namespace, {
            labelSelector: query.labelSelector as string | undefined,
            fieldSelector: query.fieldSelector as string | undefined,
          }),
    );
  }

  create(path: string, body: unknown): Promise<KObj> {
    const { r, ns, name, sub } = this.route(path);
    if (sub === 'binding' && name)
      return this.call(
        () => (
          this.api.bind(ns, name, body as Obj),
          { kind: 'Status', apiVersion: 'v1', status: 'Success', code: 201 }
        ),
      );
    return this.call(() => this.api.create(r, ns, body as Obj));
  }

  update(path: string, body: unknown): Promise<KObj> {
    const { r, ns, name, sub } = this.route(path);
    return this.call(() => this.api.update(r, ns, name!, body as Obj, writeSubOf(sub)));
  }

  patch(path: string, body: unknown, type: 'merge' | 'strategic' | 'json' = 'strategic'): Promise<KObj> {
    const { r, ns, name, sub } = this.route(path);
    return this.call(() => this.api.patch(r, ns, name!, type, body, writeSubOf(sub)));
  }

  delete(path: string, body?: unknown, query: Query = {}): Promise<KObj> {
    const { r, ns, name } = this.route(path);
    const opts = (body ?? {}) as Obj;
    const grace = query.gracePeriodSeconds ?? opts.gracePeriodSeconds;
    return this.call(
      () =>
        this.api.delete(r, ns, name!, {
          gracePeriodSeconds: grace === undefined ? undefined : Number(grace),
          preconditions: opts.preconditions,
        }).object,
    );
  }

  async *watch(path: string, query: Query = {}, signal?: AbortSignal): AsyncGenerator<WatchEvent> {
    const { r, namespace } = this.route(path);
    const queue: WatchEvent[] = [];
    let wake: (() => void) | undefined;
    const push = (type: string, object: Obj): void => {
      queue.push({ type: type as WatchEvent['type'], object });
      wake?.();
    };
    let stop: () => void;
    try {
      stop = this.api.watch(
        r,
        namespace,
        {
          labelSelector: query.labelSelector as string | undefined,
          fieldSelector: query.fieldSelector as string | undefined,
          resourceVersion: query.resourceVersion as string | undefined,
        },
        push,
      );
    } catch (e) {
      // As over HTTP: a watch that cannot start is one ERROR event carrying the Status.
      if (e instanceof ApiError) {
        yield { type: 'ERROR', object: e.toStatus() };
        return;
      }
      throw e;
    }
    const timeoutSec = query.timeoutSeconds === undefined ? 1800 : Number(query.timeoutSeconds);
    let done = false;
    const end = (): void => {
      done = true;
      wake?.();
    };
    const timer = setTimeout(end, timeoutSec * 1000);
    signal?.addEventListener('abort', end, { once: true });
    try {
      while (!done || queue.length) {
        if (queue.length) {
          yield queue.shift()!;
          continue;
        }
        if (done) break;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', end);
      stop();
    }
  }
}

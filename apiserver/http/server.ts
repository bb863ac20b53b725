// The HTTPS front of the dev apiserver: authentication, authorization,
// routing of the Kubernetes REST paths, content negotiation (JSON, Table),
// chunked watch streams, reviews, and the connections to kubelets.
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';

import { closer } from '../../kube/server-close.js';
import { SERVER_TLS } from '../../kube/tls.js';
import type { WebhookDispatcher } from '../admission/webhook/dispatcher.js';
import type { WebhookOperation } from '../admission/webhook/match.js';
import type { User } from '../api/admission.js';
import { Api, type DeleteOptions, type FieldCheck, type PatchType, writeSubOf } from '../api/api.js';
import { ApiError, errors } from '../api/errors.js';
import { evict } from '../api/eviction.js';
import { parseResourcePath, type Route } from '../api/paths.js';
import { getScale, updateScale } from '../api/scale.js';
import { type AuthorizerChain, requestVerb } from '../authz/authorizer.js';
import { openapiV2Doc, openapiV3Doc, openapiV3Root } from '../openapi/documents.js';
import { fieldValidationParam, scanJsonKeys } from '../openapi/fields.js';
import { apiVersionOf, CONNECT_SUBRESOURCES, type ResourceDef } from '../resources.js';
import { requestToken } from '../serviceaccount/token-request.js';
import type { ServiceAccountTokens } from '../serviceaccount/tokens.js';
import { type Obj, StoreError } from '../storage/store.js';
import { ANONYMOUS, type Authenticator } from './authn.js';
import { decodeBody, mediaType, readBody, yamlDuplicateKeys } from './body.js';
import {
  acceptsAggregated,
  AGGREGATED_DISCOVERY,
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  SERVER_VERSION,
} from './discovery.js';
import { impersonatedUser } from './impersonation.js';
import { KubeletProxy, rejectUpgrade } from './kubelet-proxy.js';
import {
  boolParam,
  dryRunParam,
  intParam,
  resourceVersionMatchParam,
  resourceVersionParam,
  tooLargeResourceVersion,
} from './query.js';
import { escapeSegment, ResourceProxy } from './resource-proxy.js';
import { review, type RulesResolver } from './reviews.js';
import { type IncludeObject, toTable } from './table.js';
import { admitOperation, admitWrite, webhookDispatcher, type WriteRequest } from './webhook-admission.js';
export type { User };

export interface ServerOptions {
  api: Api;
  cert: string;
  key: string;
  ca: string;
  authn: Authenticator;
  /** --authorization-mode; AlwaysAllow keeps the old rule that anonymous users may only discover. */
  authz: AuthorizerChain;
  alwaysAllow: boolean;
  kubelets: KubeletProxy;
  /** Signs TokenRequests (serviceaccounts/token). */
  serviceAccountTokens?: ServiceAccountTokens;
  log?: (line: string) => void;
  /** Seconds between watch bookmarks when the client asks for them. */
  bookmarkIntervalSec?: number;
  /** For SelfSubjectRulesReview. */
  rulesFor?: RulesResolver;
}

/** What the default system:discovery and system:public-info-viewer roles grant to the unauthenticated. */
const PUBLIC_PATHS = /^\/(api|apis|version|openapi)(\/.*)?$/;

// Clients ask with '@v1.0'; the answer is labelled with '.v1.0', which Go's mime parser accepts.
const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const OPENAPI_V2_PROTOBUF_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const RETURN_DELETED = new Set(['pods', 'services', 'namespaces']);
const WATCH_HEADERS = {
  'Content-Type': 'application/json',
  'Transfer-Encoding': 'chunked',
  'Cache-Control': 'no-cache, private',
};

const PATCH_TYPES: Record<string, PatchType> = {
  'application/merge-patch+json': 'merge',
  'application/json-patch+json': 'json',
  'application/strategic-merge-patch+json': 'strategic',
};

function wantsTable(req: IncomingMessage): boolean {
  return /as=Table/.test(String(req.headers.accept ?? ''));
}

export class ApiServer {
  readonly server: https.Server;
  private readonly closeServer: () => Promise<void>;
  private readonly proxies: ResourceProxy;
  private readonly webhooks: WebhookDispatcher;
  /** Where clients outside reach this server (https://<advertise address>:<port>), for the OIDC jwks_uri. */
  externalUrl = '';
  private readonly api: Api;
  private readonly openWatches = new Set<() => void>();
  requests = 0;

  constructor(private readonly o: ServerOptions) {
    this.api = o.api;
    this.server = https.createServer(
      {
        cert: fs.readFileSync(o.cert),
        key: fs.readFileSync(o.key),
        ca: fs.readFileSync(o.ca),
        requestCert: true,
        rejectUnauthorized: false,
        ...SERVER_TLS,
      },
      (req, res) => void this.handle(req, res),
    );
    this.server.on(
      'upgrade',
      (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head),
    );
    this.server.keepAliveTimeout = 60_000;
    this.closeServer = closer(this.server);
    this.proxies = new ResourceProxy(this.api, o.kubelets.client);
    this.webhooks = webhookDispatcher(this.api);
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        const a = this.server.address();
        resolve(typeof a === 'object' && a ? a.port : port);
      });
    });
  }

  async close(): Promise<void> {
    for (const stop of this.openWatches) stop();
    await this.closeServer();
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(code, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-cache, private',
    });
    res.end(text);
  }

  /** A write's body, with what fieldValidation asks of it (duplicate keys are found in the JSON text). */
  private async writeBody(
    req: IncomingMessage,
    q: URLSearchParams,
    type: string,
    allowed: string[],
    kind: 'body' | 'patch' | 'json-patch' = 'body',
  ): Promise<{ body: Obj; fields: FieldCheck }> {
    const mode = fieldValidationParam(q.get('fieldValidation'));
    const raw = await readBody(req);
    const body = decodeBody(raw, type, allowed) as Obj;
    const fields: FieldCheck = { mode, warnings: [] };
    // go-yaml's strict decoding refuses a repeated key before anything else; Warn reports it.
    if (mode !== 'Ignore' && type === 'application/yaml') {
      const dupes = yamlDuplicateKeys(raw.toString('utf8'));
      if (dupes.length && mode === 'Strict')
        throw errors.badRequest(
          `error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  ${dupes.join('\n  ')}`,
        );
      fields.warnings!.push(...dupes);
    }
    // A JSON patch is a list of operations: its keys are not the object's.
    if (mode !== 'Ignore' && type === 'application/json' && kind !== 'json-patch') {
      const scan = scanJsonKeys(raw.toString('utf8'));
      fields.duplicates = scan.duplicates;
      if (kind === 'body') fields.firstAt = scan.firstAt;
    }
    return { body, fields };
  }

  /** An OpenAPI document: JSON, or for v2 the protobuf form client-go asks for. */
  private sendDocument(
    req: IncomingMessage,
    res: ServerResponse,
    doc: { body: string; hash: string; protobuf?: Buffer },
    v2: boolean,
  ): void {
    const accept = String(req.headers.accept ?? '*/*');
    const pb =
      v2 && doc.protobuf && (accept.includes(OPENAPI_V2_PROTOBUF) || accept.includes(OPENAPI_V2_PROTOBUF_TYPE));
    if (!pb && !/application\/json|\*\/\*|application\/\*/.test(accept))
      throw new ApiError(
        406,
        'NotAcceptable',
        `only the following media types are accepted: application/json${v2 ? `, ${OPENAPI_V2_PROTOBUF}` : ''}`,
      );
    const tag = `"${doc.hash}${pb ? '-pb' : ''}"`;
    if (req.headers['if-none-match'] === tag) {
      res.writeHead(304, { ETag: tag });
      res.end();
      return;
    }
    const body = pb ? doc.protobuf! : doc.body;
    res.writeHead(200, {
      'Content-Type': pb ? OPENAPI_V2_PROTOBUF_TYPE : 'application/json',
      'Content-Length': Buffer.byteLength(body),
      ETag: tag,
      'Cache-Control': v2 ? 'no-cache, private' : 'public, immutable',
      Vary: 'Accept',
    });
    res.end(body);
  }

  /** Field validation warnings as upstream's `Warning: 299 - "..."` headers. */
  private warn(res: ServerResponse, fields: FieldCheck): void {
    if (fields.warnings?.length)
      res.setHeader(
        'Warning',
        fields.warnings.map((w) => `299 - ${JSON.stringify(w)}`),
      );
  }

  private sendError(res: ServerResponse, e: unknown): void {
    const tooLarge = e instanceof StoreError && e.reason === 'TooLarge';
    const err =
      e instanceof ApiError
        ? e
        : tooLarge
          ? new ApiError(413, 'RequestEntityTooLarge', e.message)
          : errors.internal((e as Error).message);
    if (!(e instanceof ApiError) && !tooLarge) this.o.log?.(`internal error: ${(e as Error).stack ?? String(e)}`);
    if (res.headersSent) {
      res.end();
      return;
    }
    this.send(res, err.code, err.toStatus());
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requests++;
    const url = new URL(req.url ?? '/', 'https://localhost');
    try {
      const path = url.pathname.replace(/\/+$/, '') || '/';
      if (path === '/healthz' || path === '/livez' || path === '/readyz') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('ok');
        return;
      }
      const authenticated = await this.o.authn.request(req);
      if (!authenticated) throw errors.unauthorized();
      const user = impersonatedUser(req, authenticated, this.o.authz, this.o.alwaysAllow);
      await this.route(req, res, url, path, user);
    } catch (e) {
      this.sendError(res, e);
    }
  }

  /** Authorization of one request; throws upstream-worded 403s. */
  private authorize(user: User, method: string, path: string, route: Route | undefined, q: URLSearchParams): void {
    const watch = boolParam(q, 'watch');
    if (this.o.alwaysAllow) {
      // No authorizer but AlwaysAllow: everyone authenticated may do everything; anonymous may only discover.
      if (user !== ANONYMOUS) return;
      if (method === 'GET' && PUBLIC_PATHS.test(path) && (!route || path.split('/').filter(Boolean).length <= 3))
        return;
      // kubeadm's kubeadm:bootstrap-signer-clusterinfo Role: joining nodes read cluster-info before they have credentials.
      if (method === 'GET' && path === '/api/v1/namespaces/kube-public/configmaps/cluster-info') return;
    }
    if (!route) {
      const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
      if (
        !this.o.alwaysAllow &&
        this.o.authz.authorize({
          user,
          verb,
          resourceRequest: false,
          apiGroup: '',
          resource: '',
          subresource: '',
          namespace: '',
          name: '',
          path,
        }).allowed
      )
        return;
      throw errors.forbiddenPath(user.name, verb, path);
    }
    // Connect subresources are authorized by HTTP method (GET is get, POST is create), as upstream.
    const verb =
      route.sub && CONNECT_SUBRESOURCES.has(route.sub)
        ? method === 'POST'
          ? 'create'
          : 'get'
        : requestVerb(method, !!route.name, watch);
    const a = {
      user,
      verb,
      resourceRequest: true,
      apiGroup: route.r.group,
      resource: route.r.resource,
      subresource: route.sub ?? '',
      namespace: route.namespace ?? '',
      name: route.name ?? '',
      path,
      fieldSelector: q.get('fieldSelector') ?? undefined,
    };
    let d = this.o.alwaysAllow ? { allowed: false, reason: '' } : this.o.authz.authorize(a);
    // A WebSocket exec/attach/portforward arrives as GET, but it writes to the pod: create is needed too (newer upstream).
    if (d.allowed && verb === 'get' && route.sub && CONNECT_SUBRESOURCES.has(route.sub)) {
      d = this.o.authz.authorize({ ...a, verb: 'create' });
      if (!d.allowed)
        throw errors.forbidden(
          user.name,
          'create',
          `${route.r.resource}/${route.sub}`,
          route.r.group,
          route.namespace,
          route.name,
          d.reason,
        );
    }
    if (d.allowed) return;
    const resource = route.sub ? `${route.r.resource}/${route.sub}` : route.r.resource;
    throw errors.forbidden(user.name, verb, resource, route.r.group, route.namespace, route.name, d.reason);
  }

  /** exec, attach and portforward arrive as connection upgrades, and so does a log read over a WebSocket. */
  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const path = url.pathname.replace(/\/+$/, '');
    const route = parseResourcePath(path.split('/').filter(Boolean).map(decodeURIComponent), this.api.resources);
    try {
      const authenticated = await this.o.authn.request(req);
      if (!authenticated) throw errors.unauthorized();
      const user = impersonatedUser(req, authenticated, this.o.authz, this.o.alwaysAllow);
      if (
        !route ||
        route.r.resource !== 'pods' ||
        !route.name ||
        !route.namespace ||
        !route.sub ||
        !(CONNECT_SUBRESOURCES.has(route.sub) || route.sub === 'log')
      )
        throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      this.authorize(user, req.method ?? 'GET', path, route, url.searchParams);
      if (route.sub === 'log')
        return this.o.kubelets.logsUpgrade(req, socket, head, route.namespace, route.name, url.searchParams);
      const fields: FieldCheck = { mode: 'Ignore', warnings: [] };
      await admitOperation(
        this.webhooks,
        this.writeRequest(user, route.r, route.sub, 'CONNECT', route.namespace, route.name, false, fields),
        connectOptions(route.sub, url.searchParams),
      );
      this.o.kubelets.upgrade(req, socket, head, route.namespace, route.name, route.sub, url.searchParams);
    } catch (e) {
      rejectUpgrade(socket, e instanceof ApiError ? e : errors.internal((e as Error).message));
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, path: string, user: User): Promise<void> {
    const method = req.method ?? 'GET';
    let segs = path.split('/').filter(Boolean).map(decodeURIComponent);
    // Legacy watch paths (/api/v1/watch/..., /apis/<g>/<v>/watch/...), still served by kube-apiserver 1.32.
    const at = segs[0] === 'api' ? 2 : 3;
    if (method === 'GET' && segs[at] === 'watch' && (segs[0] === 'api' || segs[0] === 'apis')) {
      segs = [...segs.slice(0, at), ...segs.slice(at + 1)];
      url.searchParams.set('watch', 'true');
      const legacy = parseResourcePath(segs, this.api.resources);
      if (legacy?.name && !legacy.sub) {
        const sel = url.searchParams.get('fieldSelector');
        url.searchParams.set('fieldSelector', [`metadata.name=${legacy.name}`, ...(sel ? [sel] : [])].join(','));
        segs = segs.slice(0, -1);
      }
      path = `/${segs.map(encodeURIComponent).join('/')}`;
    }
    const route = parseResourcePath(segs, this.api.resources);
    this.authorize(user, method, path, route, url.searchParams);
    if (method === 'GET') {
      if (path === '/version') return this.send(res, 200, SERVER_VERSION);
      // Service account issuer discovery (OIDC), for relying parties outside the cluster.
      const tokens = this.o.serviceAccountTokens;
      if (tokens && path === '/.well-known/openid-configuration')
        return this.send(res, 200, tokens.discovery(`${this.externalUrl}/openid/v1/jwks`));
      if (tokens && path === '/openid/v1/jwks') {
        const text = JSON.stringify(await tokens.jwks());
        res.writeHead(200, { 'Content-Type': 'application/jwk-set+json', 'Content-Length': Buffer.byteLength(text) });
        return void res.end(text);
      }
      if ((path === '/api' || path === '/apis') && acceptsAggregated(req.headers.accept)) {
        const text = JSON.stringify(aggregatedDiscovery(this.api.resources.all(), path === '/api'));
        res.writeHead(200, {
          'Content-Type': AGGREGATED_DISCOVERY,
          'Content-Length': Buffer.byteLength(text),
          'Cache-Control': 'no-cache, private',
          Vary: 'Accept',
        });
        return void res.end(text);
      }
      if (path === '/api')
        return this.send(
          res,
          200,
          apiVersions(`${req.socket.localAddress ?? '127.0.0.1'}:${req.socket.localPort ?? 6443}`),
        );
      if (path === '/apis') return this.send(res, 200, apiGroupList(this.api.resources.all()));
      if (path === '/openapi/v3') return this.send(res, 200, openapiV3Root(this.api.resources));
      if (path.startsWith('/openapi/v3/') || path === '/openapi/v2') {
        const doc =
          path === '/openapi/v2'
            ? openapiV2Doc(this.api.resources)
            : openapiV3Doc(this.api.resources, path.slice('/openapi/v3/'.length));
        if (doc) return this.sendDocument(req, res, doc, path === '/openapi/v2');
      }
      if (path === '/api/v1') return this.send(res, 200, apiResourceList(this.api.resources.all(), '', 'v1'));
      if (segs[0] === 'apis' && segs.length === 2) {
        const g = apiGroup(this.api.resources.all(), segs[1]!);
        if (g) return this.send(res, 200, g);
      }
      if (segs[0] === 'apis' && segs.length === 3) {
        const l = apiResourceList(this.api.resources.all(), segs[1]!, segs[2]!);
        if (l) return this.send(res, 200, l);
      }
    }
    if (!route) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const { r, namespace, name, sub } = route;
    const ns = namespace ?? '';
    if (sub !== undefined && !(r.subresources as string[]).includes(sub))
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const q = url.searchParams;
    if (r.review) {
      if (method !== 'POST' || name)
        throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
      // A review is no object with metadata: there is no Table of it (upstream answers 406 too).
      if (wantsTable(req))
        throw new ApiError(
          406,
          'NotAcceptable',
          'the server was unable to respond with a content type that the client supports',
        );
      const body = decodeBody(await readBody(req), mediaType(req), ['application/json', 'application/yaml']) as Obj;
      return this.send(res, 201, await review(r, body, user, this.o.authn, this.o.authz, this.o.rulesFor));
    }
    const dryRun = dryRunParam(q.getAll('dryRun'));
    if (!name) {
      if (method === 'GET')
        return boolParam(q, 'watch') ? this.watch(req, res, r, namespace, q) : this.list(req, res, r, namespace, q);
      if (method === 'POST') {
        if (r.namespaced && namespace === undefined)
          throw errors.methodNotAllowed(`the server does not allow this method on the requested resource`);
        const { body, fields } = await this.writeBody(req, q, mediaType(req), ['application/json', 'application/yaml']);
        const manager = fieldManager(req, q, false);
        // A generated name is kept from the preview the webhooks saw.
        let generated: string | undefined;
        const created = await admitWrite(
          this.webhooks,
          this.writeRequest(user, r, '', 'CREATE', ns, '', dryRun, fields),
          (final, replacement) => {
            const b =
              replacement ??
              (generated && !body.metadata?.name ? { ...body, metadata: { ...body.metadata, name: generated } } : body);
            const o = this.api.runAs(user, () => this.api.create(r, ns, b), {
              dryRun: final ? dryRun : true,
              fields: final ? fields : { ...fields, warnings: [] },
              manager,
            });
            generated ??= o.metadata?.name as string | undefined;
            return o;
          },
        );
        this.warn(res, fields);
        return this.send(res, 201, created);
      }
      if (method === 'DELETE' && !r.review) {
        const opts = await this.deleteOptions(req, q);
        const sel = {
          labelSelector: q.get('labelSelector') ?? undefined,
          fieldSelector: q.get('fieldSelector') ?? undefined,
        };
        return this.send(
          res,
          200,
          this.api.runAs(user, () => this.api.deleteCollection(r, namespace, sel, opts), { dryRun: opts.dryRun }),
        );
      }
      throw errors.methodNotAllowed(`the server does not allow this method on the requested resource`);
    }
    if (r.namespaced && namespace === undefined)
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (sub === 'binding') {
      if (method !== 'POST')
        throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
      const body = decodeBody(await readBody(req), mediaType(req), ['application/json', 'application/yaml']) as Obj;
      this.api.runAs(user, () => this.api.bind(ns, name, body), { dryRun });
      return this.send(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    }
    if (sub === 'eviction') {
      if (method !== 'POST')
        throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
      const body = decodeBody(await readBody(req), mediaType(req), ['application/json', 'application/yaml']) as Obj;
      this.api.runAs(user, () => evict(this.api, ns, name, body), { dryRun });
      return this.send(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    }
    if (sub === 'proxy') {
      const t = this.proxies.target(r.resource, ns, name);
      const rest = (route.tail ?? []).map(escapeSegment).join('/');
      return this.proxies.serve(req, res, t, `/${rest}${url.pathname.endsWith('/') && rest ? '/' : ''}`, url.search);
    }
    if (sub === 'log') {
      if (method !== 'GET')
        throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
      return this.o.kubelets.logs(res, ns, name, q);
    }
    if (sub && CONNECT_SUBRESOURCES.has(sub)) throw errors.badRequest(`Upgrade request required`);
    if (sub === 'token') {
      if (method !== 'POST')
        throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
      if (!this.o.serviceAccountTokens) throw errors.internal('no service account signing key configured');
      const body = decodeBody(await readBody(req), mediaType(req), ['application/json', 'application/yaml']) as Obj;
      return this.send(res, 201, await requestToken(this.api, this.o.serviceAccountTokens, user, ns, name, body));
    }
    if (sub === 'scale') {
      if (method === 'GET') return this.send(res, 200, getScale(this.api, r, ns, name));
      if (method === 'PUT') {
        const body = decodeBody(await readBody(req), mediaType(req), ['application/json', 'application/yaml']) as Obj;
        return this.send(
          res,
          200,
          this.api.runAs(user, () => updateScale(this.api, r, ns, name, { put: body }), {
            dryRun,
            manager: fieldManager(req, q, false),
          }),
        );
      }
      if (method === 'PATCH') {
        const type = PATCH_TYPES[mediaType(req)];
        if (!type) throw errors.unsupportedMediaType(mediaType(req));
        const body = decodeBody(await readBody(req), 'application/json', ['application/json']);
        return this.send(
          res,
          200,
          this.api.runAs(user, () => updateScale(this.api, r, ns, name, { patch: { type, body } }), {
            dryRun,
            manager: fieldManager(req, q, false),
          }),
        );
      }
      throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
    }
    const status = writeSubOf(sub);
    switch (method) {
      case 'GET':
        if (wantsTable(req)) return this.send(res, 200, toTable(r, [this.api.get(r, ns, name)], {}, includeObject(q)));
        return this.send(res, 200, this.api.get(r, ns, name));
      case 'PUT': {
        const { body, fields } = await this.writeBody(req, q, mediaType(req), ['application/json', 'application/yaml']);
        const manager = fieldManager(req, q, false);
        const updated = await this.admitUpdate(user, r, sub ?? '', ns, name, dryRun, fields, (final, replacement) =>
          this.api.runAs(user, () => this.api.update(r, ns, name, replacement ?? body, status), {
            dryRun: final ? dryRun : true,
            fields: final ? fields : { ...fields, warnings: [] },
            manager,
          }),
        );
        this.warn(res, fields);
        return this.send(res, 200, updated);
      }
      case 'PATCH': {
        const manager = fieldManager(req, q, mediaType(req) === APPLY_PATCH);
        if (mediaType(req) === APPLY_PATCH) {
          const { body, fields } = await this.writeBody(req, q, 'application/yaml', ['application/yaml'], 'patch');
          const force = boolParam(q, 'force');
          let created = false;
          const object = await this.admitUpdate(user, r, sub ?? '', ns, name, dryRun, fields, (final, replacement) => {
            const opts = {
              dryRun: final ? dryRun : true,
              fields: final ? fields : { ...fields, warnings: [] },
              manager,
            };
            if (replacement) return this.replace(user, r, ns, name, replacement, status, opts);
            const out = this.api.runAs(user, () => this.api.apply(r, ns, name, body, force, status), opts);
            created = out.created;
            return out.object;
          });
          this.warn(res, fields);
          return this.send(res, created ? 201 : 200, object);
        }
        const type = PATCH_TYPES[mediaType(req)];
        if (!type) throw errors.unsupportedMediaType(mediaType(req));
        if (q.has('force'))
          throw patchOptionsInvalid(
            'force',
            'FieldValueForbidden',
            'Forbidden: may not be specified for non-apply patch',
          );
        const { body, fields } = await this.writeBody(
          req,
          q,
          'application/json',
          ['application/json'],
          type === 'json' ? 'json-patch' : 'patch',
        );
        const patched = await this.admitUpdate(user, r, sub ?? '', ns, name, dryRun, fields, (final, replacement) => {
          const opts = { dryRun: final ? dryRun : true, fields: final ? fields : { ...fields, warnings: [] }, manager };
          if (replacement) return this.replace(user, r, ns, name, replacement, status, opts);
          return this.api.runAs(user, () => this.api.patch(r, ns, name, type, body, status), opts);
        });
        this.warn(res, fields);
        return this.send(res, 200, patched);
      }
      case 'DELETE': {
        const opts = await this.deleteOptions(req, q);
        const warnings: string[] = [];
        const old = this.api.find(r, ns, name);
        if (old)
          await admitOperation(this.webhooks, {
            ...this.writeRequest(user, r, '', 'DELETE', ns, name, opts.dryRun, { mode: 'Ignore', warnings }),
            oldObject: old,
            options: {
              kind: 'DeleteOptions',
              apiVersion: 'meta.k8s.io/v1',
              ...(opts.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: opts.gracePeriodSeconds } : {}),
              ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
              ...(opts.preconditions ? { preconditions: opts.preconditions } : {}),
            },
          });
        if (warnings.length)
          res.setHeader(
            'Warning',
            warnings.map((w) => `299 - ${JSON.stringify(w)}`),
          );
        const { object, deleted } = this.api.runAs(user, () => this.api.delete(r, ns, name, opts), {
          dryRun: opts.dryRun,
        });
        // As upstream's registries: pods, services and namespaces answer with the object, others with a Status once gone.
        if (deleted && (r.custom || !RETURN_DELETED.has(r.resource)))
          return this.send(res, 200, {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            details: { name, group: r.group, kind: r.resource, uid: object.metadata?.uid },
          });
        return this.send(res, 200, object);
      }
      default:
        throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
    }
  }

  private writeRequest(
    user: User,
    r: ResourceDef,
    subresource: string,
    operation: WebhookOperation,
    namespace: string,
    name: string,
    dryRun: boolean,
    fields: FieldCheck,
  ): WriteRequest {
    return { user, r, subresource, operation, namespace, name, dryRun, warnings: (fields.warnings ??= []) };
  }

  /** An update, patch or apply through the webhooks: UPDATE of the stored object, or CREATE when there is none. */
  private admitUpdate(
    user: User,
    r: ResourceDef,
    sub: string,
    ns: string,
    name: string,
    dryRun: boolean,
    fields: FieldCheck,
    run: (final: boolean, replacement?: Obj) => Obj,
  ): Promise<Obj> {
    const old = this.api.find(r, ns, name);
    const w = this.writeRequest(user, r, sub, old ? 'UPDATE' : 'CREATE', ns, name, dryRun, fields);
    return admitWrite(this.webhooks, { ...w, ...(old ? { oldObject: old } : {}) }, run);
  }

  /** Writes what the mutating webhooks left in place of a patch or apply. */
  private replace(
    user: User,
    r: ResourceDef,
    ns: string,
    name: string,
    o: Obj,
    status: ReturnType<typeof writeSubOf>,
    opts: { dryRun: boolean; fields: FieldCheck; manager: string },
  ): Obj {
    const exists = this.api.find(r, ns, name) !== undefined;
    return this.api.runAs(
      user,
      () => (exists ? this.api.update(r, ns, name, o, status) : this.api.create(r, ns, o)),
      opts,
    );
  }

  /** DeleteOptions from the body and the query (query wins), validated as upstream. */
  private async deleteOptions(req: IncomingMessage, q: URLSearchParams): Promise<DeleteOptions & { dryRun: boolean }> {
    const raw = await readBody(req);
    const opts = (raw.length ? decodeBody(raw, mediaType(req), ['application/json', 'application/yaml']) : {}) as Obj;
    const grace = intParam(q, 'gracePeriodSeconds') ?? opts.gracePeriodSeconds;
    const policy =
      q.get('propagationPolicy') ?? opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : undefined);
    if (policy !== undefined && !['Background', 'Foreground', 'Orphan'].includes(policy))
      throw errors.invalid('DeleteOptions', 'meta.k8s.io', '', [
        {
          field: 'propagationPolicy',
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: "${String(policy)}": supported values: "Foreground", "Background", "Orphan", "nil"`,
        },
      ]);
    return {
      gracePeriodSeconds: grace === undefined || grace === null ? undefined : Number(grace),
      preconditions: opts.preconditions,
      propagationPolicy: policy,
      dryRun: dryRunParam(q.getAll('dryRun')) || dryRunParam(opts.dryRun),
    };
  }

  /** Waits (up to 3 s, as the watch cache) for the store to reach a resourceVersion asked for; else 504. */
  private async waitForResourceVersion(rv: number | undefined): Promise<void> {
    if (rv === undefined) return;
    const deadline = Date.now() + 3000;
    while (this.api.store.resourceVersion < rv) {
      if (Date.now() >= deadline) throw tooLargeResourceVersion(rv, this.api.store.resourceVersion);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async list(
    req: IncomingMessage,
    res: ServerResponse,
    r: ResourceDef,
    namespace: string | undefined,
    q: URLSearchParams,
  ): Promise<void> {
    const match = resourceVersionMatchParam(q, false);
    const rv = resourceVersionParam(q);
    const limit = intParam(q, 'limit');
    await this.waitForResourceVersion(rv);
    const list = this.api.list(r, namespace, {
      labelSelector: q.get('labelSelector') ?? undefined,
      fieldSelector: q.get('fieldSelector') ?? undefined,
      limit,
      continue: q.get('continue') ?? undefined,
      exactResourceVersion: match === 'Exact' ? rv : undefined,
    });
    if (wantsTable(req))
      return this.send(res, 200, toTable(r, list.items as Obj[], list.metadata as Obj, includeObject(q)));
    this.send(res, 200, list);
  }

  private async watch(
    req: IncomingMessage,
    res: ServerResponse,
    r: ResourceDef,
    namespace: string | undefined,
    q: URLSearchParams,
  ): Promise<void> {
    resourceVersionMatchParam(q, true);
    const rv = resourceVersionParam(q);
    const timeoutSec = intParam(q, 'timeoutSeconds') ?? 1800;
    const bookmarks = boolParam(q, 'allowWatchBookmarks');
    const opts = {
      labelSelector: q.get('labelSelector') ?? undefined,
      fieldSelector: q.get('fieldSelector') ?? undefined,
      resourceVersion: rv === undefined ? undefined : String(rv),
    };
    await this.waitForResourceVersion(rv);
    const table = wantsTable(req);
    const include = includeObject(q);
    const encode = (type: string, object: Obj): string =>
      JSON.stringify({
        type,
        object: type === 'BOOKMARK' || type === 'ERROR' || !table ? object : toTable(r, [object], {}, include),
      }) + '\n';
    // Events the watch replays as it starts come before the headers are out: they wait, in order.
    let held: string[] | undefined = [];
    const write = (type: string, object: Obj): void => {
      if (held) held.push(encode(type, object));
      else res.write(encode(type, object));
    };
    let unsubscribe: () => void;
    try {
      unsubscribe = this.api.watch(r, namespace, opts, write);
    } catch (e) {
      // As upstream: a watch from a too old resourceVersion starts, then says 410 in an ERROR event; other bad requests are plain errors.
      if (!(e instanceof ApiError && e.code === 410)) throw e;
      res.writeHead(200, WATCH_HEADERS);
      res.end(encode('ERROR', e.toStatus()));
      return;
    }
    // Headers go out at once (upstream flushes them), so clients waiting for the response see a quiet watch start.
    res.writeHead(200, WATCH_HEADERS);
    res.flushHeaders();
    for (const line of held) res.write(line);
    held = undefined;
    const timers: NodeJS.Timeout[] = [];
    const stop = (): void => {
      unsubscribe();
      for (const t of timers) {
        clearTimeout(t);
        clearInterval(t);
      }
      this.openWatches.delete(stop);
      if (!res.writableEnded) res.end();
    };
    this.openWatches.add(stop);
    timers.push(setTimeout(stop, Math.min(Math.max(timeoutSec, 0), 86_400) * 1000));
    if (bookmarks) {
      timers.push(
        setInterval(
          () =>
            write('BOOKMARK', {
              kind: r.kind,
              apiVersion: apiVersionOf(r),
              metadata: { resourceVersion: String(this.api.store.resourceVersion) },
            }),
          (this.o.bookmarkIntervalSec ?? 10) * 1000,
        ),
      );
    }
    req.on('close', stop);
    res.on('error', stop);
  }
}

const APPLY_PATCH = 'application/apply-patch+yaml';

const patchOptionsInvalid = (field: string, reason: string, message: string): ApiError =>
  errors.invalid('PatchOptions', 'meta.k8s.io', '', [{ field, reason, message }]);

/** The write's field manager: ?fieldManager=, else (not for apply, where it is required) the user agent's first word, as upstream. */
/** The options object of a CONNECT, as admission sees it (PodExecOptions, PodAttachOptions, PodPortForwardOptions). */
function connectOptions(sub: string, q: URLSearchParams): Obj {
  if (sub === 'portforward')
    return { kind: 'PodPortForwardOptions', apiVersion: 'v1', ports: q.getAll('ports').map(Number) };
  const flag = (k: string): boolean => q.get(k) === 'true' || q.get(k) === '1';
  return {
    kind: sub === 'exec' ? 'PodExecOptions' : 'PodAttachOptions',
    apiVersion: 'v1',
    stdin: flag('stdin'),
    stdout: flag('stdout'),
    stderr: flag('stderr'),
    tty: flag('tty'),
    ...(q.get('container') ? { container: q.get('container') } : {}),
    ...(sub === 'exec' ? { command: q.getAll('command') } : {}),
  };
}

function fieldManager(req: IncomingMessage, q: URLSearchParams, apply: boolean): string {
  const given = q.get('fieldManager');
  if (given) {
    if (Buffer.byteLength(given) > 128)
      throw patchOptionsInvalid('fieldManager', 'FieldValueTooLong', 'Too long: may not be more than 128 bytes');
    if (/[^\x20-\x7e]/.test(given))
      throw patchOptionsInvalid(
        'fieldManager',
        'FieldValueInvalid',
        `Invalid value: ${JSON.stringify(given)}: must be made of printable ASCII characters`,
      );
    return given;
  }
  if (apply)
    throw patchOptionsInvalid('fieldManager', 'FieldValueRequired', 'Required value: is required for apply patch');
  const ua = String(req.headers['user-agent'] ?? '');
  return ua.split('/')[0]!.slice(0, 128) || 'unknown';
}

function includeObject(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

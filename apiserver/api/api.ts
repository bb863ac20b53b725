// REST semantics of the dev apiserver, independent of HTTP: create, get,
// list, update, patch, delete (graceful for pods, finalizers), status
// subresource, pod binding, and watch.
import { randomBytes, randomUUID } from 'node:crypto';

import { familyOfText } from '../../kube/cidr.js';
import { canonicalJson, semanticJson } from '../../kube/hash.js';
import { jsonPatch, mergePatch, PatchDecodeError, PatchError, strategicMerge } from '../../kube/patch.js';
import { defaultContainer } from '../../kube/pod-defaults.js';
import {
  matchFields,
  matchLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from '../../kube/selectors.js';
import { strategicMergeBySchema } from '../../kube/strategic-merge.js';
import { rfc3339 } from '../../kube/time.js';
import { admitClaimLimits, admitPodLimits } from '../admission/limit-ranger.js';
import {
  admitPriority,
  checkSingleDefault,
  SYSTEM_PRIORITY_CLASSES,
  validatePriorityClassUpdate,
} from '../admission/priority.js';
import { admitQuota, kindsTracked, namespaceUsage } from '../admission/resource-quota.js';
import { admitRuntimeClass, validateRuntimeClassUpdate } from '../admission/runtime-class.js';
import { admitServiceAccount, validateMirrorPod } from '../admission/service-account.js';
import { prepareCsr, validateApproval, validateCsrStatus } from '../certificates/csr.js';
import { defaultClass } from '../controllers/volume-binding-model.js';
import { CLEANUP_FINALIZER, crdStatus, defaultCrd, servedResources, validateCrdUpdate } from '../crd/definition.js';
import { applySchemaDefaults, validateCustom } from '../crd/validation.js';
import { dropUnknownFields, fieldMessages, type FieldValidation } from '../openapi/fields.js';
import { patchSchemaOf } from '../openapi/patch-schema.js';
import { kindSchema } from '../openapi/schema.js';
import { apiVersionOf, Registry, type ResourceDef, storageKey, storagePrefix } from '../resources.js';
import { applyConfig, type ManagedFieldsEntry, trackUpdate } from '../ssa/managed-fields.js';
import { deepEqual } from '../ssa/typed.js';
import { firstIndex } from '../storage/key-index.js';
import { type Obj, Store, StoreError, type StoreEvent } from '../storage/store.js';
import {
  type AdmissionPlugin,
  type Attributes,
  type GetObject,
  type ListObjects,
  SYSTEM_USER,
  type User,
} from './admission.js';
import { IpAllocator, PortAllocator, serviceCidrs } from './allocators.js';
import { stampTemplateGeneration, validateControllerRevision, validateStatefulSetUpdate } from './apps.js';
import { addDefaultTolerations, applyDefaults } from './defaults.js';
import { validateEphemeralUpdate } from './ephemeral.js';
import { ApiError, type Cause, errors } from './errors.js';
import { validateJob, validateJobUpdate } from './jobs.js';
import { applyResize, validatePodResize } from './pod-resize.js';
import { planServiceIPs } from './service-ips.js';
import { validateImmutableDataUpdate, validateNodeUpdate, validateObject } from './validate.js';
import { versionView, type View, VIEWS } from './views.js';

/** The manager of writes made inside the apiserver (controllers, the scheduler), as upstream's controller manager. */
export const INTERNAL_MANAGER = 'kube-controller-manager';
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How one write call treats fields the schema does not know, and where its warnings go. */
export interface FieldCheck {
  mode: FieldValidation;
  /** Keys the request body repeated (see scanJsonKeys). */
  duplicates?: string[];
  /** Where each path first appears in a create or update body, to order reports as upstream. */
  firstAt?: Map<string, number>;
  warnings?: string[];
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  /** With resourceVersionMatch=Exact: the list as it was at this resourceVersion (from the watch history). */
  exactResourceVersion?: number;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Background (default): the garbage collector deletes dependents afterwards; Foreground: they go first; Orphan: they stay, unowned. */
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
}

export type PatchType = 'merge' | 'json' | 'strategic';
/** Subresources written through update, patch and apply: each changes only its part of the object. */
export type WriteSub = 'status' | 'approval' | 'ephemeralcontainers' | 'resize' | 'finalize';
const WRITE_SUBS = new Set<string>(['status', 'approval', 'ephemeralcontainers', 'resize', 'finalize']);

/**
 * What a status or approval write takes from the request's metadata, as upstream's status strategies: its labels,
 * annotations, finalizers and owner references (a pod's owners stay: old kubelets corrupted them); the rest is the
 * stored object's. A request without metadata changes none.
 */
function statusWriteMetadata(cur: Obj, body: Obj, resource: string): Obj {
  const md = clone(cur.metadata) as Obj;
  const from = body.metadata as Obj | undefined;
  if (!from) return md;
  for (const k of ['labels', 'annotations', 'finalizers', ...(resource === 'pods' ? [] : ['ownerReferences'])]) {
    if (from[k] === undefined) delete md[k];
    else md[k] = clone(from[k]);
  }
  return md;
}

/** Workload selectors never change (apps/v1 ValidateXUpdate). */
const SELECTOR_IMMUTABLE = new Set(['deployments', 'replicasets', 'daemonsets', 'statefulsets']);
/** Per-resource update rules beyond validateObject: upstream's ValidateXUpdate. */
const UPDATE_RULES: Record<string, (next: Obj, cur: Obj) => Cause[]> = {
  jobs: validateJobUpdate,
  priorityclasses: validatePriorityClassUpdate,
  runtimeclasses: validateRuntimeClassUpdate,
  statefulsets: validateStatefulSetUpdate,
  controllerrevisions: validateControllerRevision,
  customresourcedefinitions: validateCrdUpdate,
  nodes: validateNodeUpdate,
  configmaps: validateImmutableDataUpdate,
  secrets: validateImmutableDataUpdate,
};

/** A built-in resource's plural; custom resources answer none of the built-ins' names (a CRD may call its kind "services"). */
const builtin = (r: ResourceDef): string => (r.custom ? '' : r.resource);

const IMMORTAL_NAMESPACES = ['default', 'kube-system', 'kube-public'];
export const writeSubOf = (sub: string | undefined): WriteSub | undefined =>
  sub && WRITE_SUBS.has(sub) ? (sub as WriteSub) : undefined;

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

const clone = <T>(o: T): T => structuredClone(o);

/** A custom resource read from storage gets the defaults its schema has now (upstream defaults on read too). */
function readDefaults(r: ResourceDef, o: Obj): Obj {
  if (r.custom) applySchemaDefaults(o, r.custom.openAPIV3Schema);
  return o;
}

/** A pod spec changed through a subresource (resize, ephemeralcontainers) is a new generation, as any spec change. */
function bumpGenerationOnSpecChange(cur: Obj, next: Obj): void {
  if (specChanged(cur.spec, next.spec))
    next.metadata = { ...next.metadata, generation: (cur.metadata.generation ?? 1) + 1 };
}

/**
 * Whether a spec changed, as upstream's semantic equality sees it: not by field order (a protobuf body decodes in
 * field-number order) nor by an empty object or list where there was none.
 */
function specChanged(a: unknown, b: unknown): boolean {
  return semanticJson(a ?? {}) !== semanticJson(b ?? {});
}

/** Equal as stored objects, resourceVersion aside. Plain JSON (key order counts) but for the small metadata, whose
 * system fields an update puts back in its own order (a patch setting `uid: null` changes nothing). */
function sameObject(a: Obj, b: Obj): boolean {
  const norm = (o: Obj): string =>
    JSON.stringify({ ...o, metadata: undefined }) + canonicalJson({ ...o.metadata, resourceVersion: undefined });
  return norm(a) === norm(b);
}

/** A custom resource's generation moves with any change but to metadata (and status, which the main resource cannot change). */
function customChanged(r: ResourceDef, next: Obj, cur: Obj): boolean {
  const withStatus = !r.subresources.includes('status');
  const rest = (o: Obj): string =>
    JSON.stringify({ ...o, metadata: undefined, status: withStatus ? o.status : undefined });
  return rest(next) !== rest(cur);
}

/** Five characters from upstream's SimpleNameGenerator alphabet (no vowels, no look-alikes). */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
export const randomSuffix = (n = 5): string =>
  Array.from(randomBytes(n), (b) => NAME_ALPHABET[b % NAME_ALPHABET.length]).join('');

/** Selectable fields that are Go bools or ints upstream: unset prints "false" or "0" (NodeToSelectableFields, …). */
const ZERO_OF_FIELD: Record<string, string> = {
  'spec.unschedulable': 'false',
  'spec.hostNetwork': 'false',
  'status.replicas': '0',
};

function getPath(o: Obj, path: string): string {
  let cur: unknown = o;
  for (const seg of path.split('.')) cur = cur && typeof cur === 'object' ? (cur as Obj)[seg] : undefined;
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}

export class Api {
  readonly store: Store;
  /** What this apiserver serves: the built-ins and the custom resources of its CustomResourceDefinitions. */
  readonly resources = new Registry();
  /** The primary family's ClusterIP range (the `kubernetes` Service's). */
  readonly serviceIPs: IpAllocator;
  /** One range per family, primary first (a dual-stack --service-cluster-ip-range). */
  readonly serviceIPsByFamily: IpAllocator[];
  private readonly nodePorts = new PortAllocator();
  private readonly admission: AdmissionPlugin[];
  /** Who the current (synchronous) call is for; see runAs. */
  private user: User = SYSTEM_USER;
  /** Whether the current call is a dry run (dryRun=All): everything runs, nothing is stored. */
  private dry = false;
  /** Field validation of the current call; calls from inside (controllers) drop unknown fields silently. */
  private fields: FieldCheck = { mode: 'Ignore' };
  /** The field manager of the current call (fieldManager, else the client's user agent). */
  private manager = INTERNAL_MANAGER;
  /** Where admission's warnings for the current call go (the response's Warning headers). */
  private warnings: string[] | undefined;
  /** Audit annotations admission records (there is no audit log: main.ts logs them). */
  onAuditAnnotation?: (a: Attributes, key: string, value: string) => void;
  /** managedFields a server-side apply computed, for the create or update it ends in. */
  private applied: ManagedFieldsEntry[] | undefined;
  /** Writes of a dry run: what the store would return, with no resourceVersion consumed and no event sent. */
  private readonly dryWrites = {
    create: (key: string, obj: Obj): Obj => {
      if (this.store.get(key)) throw new StoreError('AlreadyExists', key);
      const o = { ...obj, metadata: { ...obj.metadata } };
      delete o.metadata.resourceVersion;
      return o;
    },
    update: (key: string, obj: Obj): Obj => {
      const cur = this.store.get(key);
      if (!cur) throw new StoreError('NotFound', key);
      return { ...obj, metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion } };
    },
    delete: (key: string): Obj => {
      const cur = this.store.get(key);
      if (!cur) throw new StoreError('NotFound', key);
      return cur;
    },
  };

  /** Where writes go: the store, or nowhere in a dry run. */
  private get write(): Pick<Store, 'create' | 'update' | 'delete'> {
    return this.dry ? this.dryWrites : this.store;
  }

  private readonly serviceCidrList: string[];

  constructor(store: Store, serviceCidr = '10.96.0.0/12', admission: AdmissionPlugin[] = []) {
    this.store = store;
    this.admission = admission;
    this.serviceCidrList = serviceCidrs(serviceCidr);
    this.serviceIPsByFamily = this.serviceCidrList.map((c) => new IpAllocator(c));
    this.serviceIPs = this.serviceIPsByFamily[0]!;
    for (const svc of store.list(storagePrefix(this.res('', 'services'))).items) this.reserveService(svc);
    this.serveDefinitions();
    this.bootstrap();
  }

  /** Runs one call as `user`, for admission. Api calls are synchronous, so a field is enough. */
  runAs<T>(user: User, fn: () => T, o: { dryRun?: boolean; fields?: FieldCheck; manager?: string } = {}): T {
    const prev = {
      user: this.user,
      dry: this.dry,
      fields: this.fields,
      manager: this.manager,
      warnings: this.warnings,
    };
    this.user = user;
    this.dry = o.dryRun ?? false;
    this.fields = o.fields ?? { mode: 'Ignore' };
    this.warnings = o.fields?.warnings;
    this.manager = o.manager ?? INTERNAL_MANAGER;
    try {
      return fn();
    } finally {
      Object.assign(this, prev);
      this.applied = undefined;
    }
  }

  /** managedFields of a write: what an apply computed, what the client set explicitly, or the writer's Update entry. */
  private managedFieldsFor(r: ResourceDef, cur: Obj | undefined, next: Obj, sub: string): ManagedFieldsEntry[] {
    const applied = this.applied;
    this.applied = undefined;
    if (applied) return applied;
    const given = next.metadata?.managedFields as ManagedFieldsEntry[] | undefined;
    // A client may set managedFields (kubectl's client-side-apply upgrade does); [{}] clears them, [] leaves them be.
    if (Array.isArray(given) && given.length && !deepEqual(given, cur?.metadata?.managedFields))
      return given.filter((e) => e && typeof e === 'object' && e.manager);
    const base = cur ?? { metadata: { managedFields: Array.isArray(given) ? given : [] } };
    return trackUpdate(r, base as Obj, next, { manager: this.manager, subresource: sub, now: rfc3339() });
  }

  /** Drops the fields `o`'s schema does not declare; Strict refuses them (400), Warn reports them. Once per call. */
  private checkFields(r: ResourceDef, o: Obj, patch: boolean | 'apply'): void {
    const f = this.fields;
    this.fields = { mode: 'Ignore' };
    const unknown = dropUnknownFields(o, kindSchema(r));
    if (f.mode === 'Ignore') return;
    // An apply is converted to a typed object first, as server-side apply does: its refusal names the paths.
    if (patch === 'apply' && f.mode === 'Strict' && unknown.length) {
      const each = unknown.map((p) => `.${p}: field not declared in schema`);
      const md = (o.metadata ?? {}) as Obj;
      throw errors.badRequest(
        `failed to create typed patch object (${md.namespace ? `${String(md.namespace)}/` : ''}${String(md.name)}; ${apiVersionOf(r)}, Kind=${r.kind}): ${each.length === 1 ? each[0] : `errors:\n  ${each.join('\n  ')}`}`,
      );
    }
    const dupes = (f.duplicates ?? []).filter(
      (d) => patch || !unknown.some((u) => d === u || d.startsWith(`${u}.`) || d.startsWith(`${u}[`)),
    );
    const msgs = fieldMessages({ unknown, duplicates: dupes, firstAt: patch ? undefined : f.firstAt });
    if (!msgs.length) return;
    if (f.mode === 'Warn') {
      f.warnings?.push(...msgs);
      return;
    }
    const why = `strict decoding error: ${msgs.join(', ')}`;
    throw errors.badRequest(
      patch ? why : `${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${why}`,
    );
  }

  /** ResourceQuota admission: a create that would pass a hard limit of a quota in its namespace is refused. */
  private admitQuota(r: ResourceDef, ns: string, o: Obj): void {
    const quotas = this.store.list(storagePrefix(this.res('', 'resourcequotas'), ns)).items;
    if (!quotas.length) return;
    admitQuota(r.resource, r.group, o, quotas, (q) => this.quotaUsage(ns, q));
  }

  /** What a namespace uses now of each resource a quota limits. */
  quotaUsage(ns: string, q: Obj): Record<string, string> {
    const hard = (q.spec?.hard ?? {}) as Record<string, string>;
    const objects = kindsTracked(hard).flatMap(({ resource, group }) => {
      const def = this.resources.stored(group, resource);
      return def ? [{ resource, group, items: this.store.list(storagePrefix(def, ns)).items }] : [];
    });
    return namespaceUsage(hard, objects, q);
  }

  private admit(a: Omit<Attributes, 'user'>): void {
    if (this.user === SYSTEM_USER) return;
    const get: GetObject = (group, resource, ns, name) =>
      this.store.get(storageKey(this.res(group, resource), ns, name));
    const list: ListObjects = (group, resource, ns) =>
      this.store.list(storagePrefix(this.res(group, resource), ns)).items;
    const warnings = this.warnings;
    const attrs: Attributes = { ...a, user: this.user, warn: (w) => warnings?.push(w) };
    attrs.annotate = (key, value) => this.onAuditAnnotation?.(attrs, key, value);
    for (const p of this.admission) p.admit(attrs, get, list);
  }

  /** A resource stored as another (events.k8s.io Events as core Events): its view and the stored resource. */
  private viewOf(r: ResourceDef): { v: View; core: ResourceDef } | undefined {
    if (r.custom && r.version !== r.custom.storageVersion)
      return { v: versionView(r), core: this.res(r.group, r.resource) };
    const v = VIEWS[`${r.group}/${r.resource}`];
    return v && { v, core: this.res(v.storage.group, v.storage.resource) };
  }

  /** List options with field selectors in the stored resource's names. */
  private static viewSelectors<T extends ListOptions>(v: View, opts: T): T {
    if (!opts.fieldSelector) return opts;
    return {
      ...opts,
      fieldSelector: opts.fieldSelector
        .split(',')
        .map((term) => term.replace(/^[^=!]+/, (f) => v.field(f.trim())))
        .join(','),
    };
  }

  res(group: string, resource: string): ResourceDef {
    const r = this.resources.stored(group, resource);
    if (!r) throw new Error(`no resource ${group}/${resource}`);
    return r;
  }

  /** Every stored resource once (a custom resource in its storage version), e.g. to find all of a namespace's objects. */
  storedResources(): ResourceDef[] {
    return this.resources.all().filter((r) => !r.custom || r.version === r.custom.storageVersion);
  }

  /**
   * Serves the custom resources of the stored CustomResourceDefinitions, now and as
   * they change: the registry follows the store's events synchronously, so a
   * definition's resources are served from the moment its write returns.
   */
  private serveDefinitions(): void {
    const crds = this.res('apiextensions.k8s.io', 'customresourcedefinitions');
    const prefix = storagePrefix(crds);
    for (const o of this.store.list(prefix).items) this.resources.setCustom(o.metadata.name, servedResources(o));
    this.store.watch(prefix, 0, (e) =>
      this.resources.setCustom(e.object.metadata.name, e.type === 'DELETED' ? [] : servedResources(e.object)),
    );
  }

  /** A definition's status as the apiserver keeps it (names, conditions, stored versions). */
  private definitionStatus(o: Obj): Obj {
    const crds = this.res('apiextensions.k8s.io', 'customresourcedefinitions');
    return crdStatus(o, this.store.list(storagePrefix(crds)).items, rfc3339());
  }

  /** A custom resource's defaults and schema check (after pruning, as upstream). */
  private checkCustom(r: ResourceDef, o: Obj): void {
    const c = r.custom!;
    applySchemaDefaults(o, c.openAPIV3Schema);
    const causes = validateCustom(o, c.openAPIV3Schema);
    if (causes.length) throw errors.invalid(r.kind, r.group, o.metadata?.name ?? '', causes);
  }

  private bootstrap(): void {
    for (const ns of SYSTEM_NAMESPACES) {
      if (!this.store.get(storageKey(this.res('', 'namespaces'), '', ns)))
        this.create(this.res('', 'namespaces'), '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    }
    const pcs = this.res('scheduling.k8s.io', 'priorityclasses');
    for (const pc of SYSTEM_PRIORITY_CLASSES)
      if (!this.store.get(storageKey(pcs, '', pc.metadata.name))) this.create(pcs, '', structuredClone(pc));
    const svc = this.res('', 'services');
    if (!this.store.get(storageKey(svc, 'default', 'kubernetes'))) {
      this.create(svc, 'default', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
        spec: {
          clusterIP: this.serviceIPs.first,
          ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }],
        },
      });
    }
    // The default ServiceCIDR, as kube-apiserver's controller makes it from --service-cluster-ip-range.
    const cidrs = this.res('networking.k8s.io', 'servicecidrs');
    if (!this.store.get(storageKey(cidrs, '', 'kubernetes'))) {
      const o = this.create(cidrs, '', {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'ServiceCIDR',
        metadata: { name: 'kubernetes' },
        spec: { cidrs: this.serviceCidrList },
      });
      const ready = { type: 'Ready', status: 'True', reason: '', message: 'Kubernetes default Service CIDR is ready' };
      this.update(
        cidrs,
        '',
        'kubernetes',
        { ...o, status: { conditions: [{ ...ready, lastTransitionTime: rfc3339() }] } },
        'status',
      );
    }
  }

  private reserveService(svc: Obj): void {
    for (const ip of (svc.spec?.clusterIPs ?? [svc.spec?.clusterIP]) as string[])
      if (ip && ip !== 'None') this.ipsFor(ip)?.reserve(ip);
    for (const p of (svc.spec?.ports ?? []) as Obj[]) if (p.nodePort) this.nodePorts.reserve(p.nodePort);
    if (svc.spec?.healthCheckNodePort) this.nodePorts.reserve(svc.spec.healthCheckNodePort);
  }

  private releaseService(svc: Obj): void {
    for (const ip of (svc.spec?.clusterIPs ?? [svc.spec?.clusterIP]) as string[])
      if (ip && ip !== 'None') this.ipsFor(ip)?.release(ip);
    for (const p of (svc.spec?.ports ?? []) as Obj[]) if (p.nodePort) this.nodePorts.release(p.nodePort);
    if (svc.spec?.healthCheckNodePort) this.nodePorts.release(svc.spec.healthCheckNodePort);
  }

  /** The ClusterIP allocator of an address's family, if the cluster has that family. */
  private ipsFor(ip: string): IpAllocator | undefined {
    return this.serviceIPsByFamily.find((a) => a.family === familyOfText(ip));
  }

  private allocateService(svc: Obj, old?: Obj): void {
    const spec = svc.spec;
    const plan = planServiceIPs(
      spec,
      old?.spec,
      this.serviceIPsByFamily.map((a) => a.family),
    );
    if (Array.isArray(plan)) throw errors.invalid('Service', '', svc.metadata.name, plan);
    const reserved: string[] = [];
    for (const ip of plan.reserve) {
      const a = this.ipsFor(ip);
      if (a?.reserve(ip)) {
        reserved.push(ip);
        continue;
      }
      for (const r of reserved) this.ipsFor(r)?.release(r);
      const why = a?.contains(ip)
        ? 'provided IP is already allocated'
        : `provided IP is not in the valid range. The range of valid IPs is ${a?.cidr ?? this.serviceIPsByFamily.map((x) => x.cidr).join(',')}`;
      throw errors.invalid('Service', '', svc.metadata.name, [
        {
          field: 'spec.clusterIPs',
          message: `Invalid value: ${JSON.stringify(plan.clusterIPs.filter(Boolean))}: failed to allocate IP ${ip}: ${why}`,
        },
      ]);
    }
    for (const ip of plan.release) this.ipsFor(ip)?.release(ip);
    const clusterIPs = plan.clusterIPs.map(
      (ip, i) => ip || this.serviceIPsByFamily.find((a) => a.family === plan.ipFamilies[i])!.allocate(),
    );
    if (spec.type === 'ExternalName') {
      // ExternalName Services have no cluster IP and no families (upstream clears them).
      for (const k of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) delete spec[k];
    } else {
      spec.clusterIP = clusterIPs[0];
      spec.clusterIPs = clusterIPs;
      spec.ipFamilies = plan.ipFamilies;
      spec.ipFamilyPolicy = plan.ipFamilyPolicy;
    }
    const wantsNodePort = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
    for (const [i, p] of ((spec.ports ?? []) as Obj[]).entries()) {
      const prev = (old?.spec?.ports as Obj[] | undefined)?.find((q) => q.port === p.port && q.protocol === p.protocol);
      if (!wantsNodePort) {
        if (prev?.nodePort) this.nodePorts.release(prev.nodePort);
        delete p.nodePort;
        continue;
      }
      if (p.nodePort === undefined && prev?.nodePort) p.nodePort = prev.nodePort;
      else if (p.nodePort === undefined) p.nodePort = this.nodePorts.allocate();
      else if (p.nodePort !== prev?.nodePort && !this.nodePorts.reserve(p.nodePort)) {
        throw errors.invalid('Service', '', svc.metadata.name, [
          {
            field: `spec.ports[${i}].nodePort`,
            message: `Invalid value: ${p.nodePort}: provided port is already allocated or out of range`,
          },
        ]);
      }
    }
    // A LoadBalancer with externalTrafficPolicy Local gets a health check node port for the load balancer to probe.
    const needsHealthCheck = spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
    const prevHc = old?.spec?.healthCheckNodePort as number | undefined;
    if (!needsHealthCheck) {
      if (prevHc) this.nodePorts.release(prevHc);
      delete spec.healthCheckNodePort;
    } else if (!spec.healthCheckNodePort && prevHc) spec.healthCheckNodePort = prevHc;
    else if (!spec.healthCheckNodePort) spec.healthCheckNodePort = this.nodePorts.allocate();
    else if (spec.healthCheckNodePort !== prevHc) {
      if (!this.nodePorts.reserve(spec.healthCheckNodePort))
        throw errors.invalid('Service', '', svc.metadata.name, [
          {
            field: 'spec.healthCheckNodePort',
            message: `Invalid value: ${spec.healthCheckNodePort}: provided port is already allocated or out of range`,
          },
        ]);
      if (prevHc) this.nodePorts.release(prevHc);
    }
  }

  private checkNamespace(r: ResourceDef, ns: string): void {
    if (!r.namespaced) return;
    if (!this.store.get(storageKey(this.res('', 'namespaces'), '', ns))) throw errors.notFound('namespaces', '', ns);
  }

  private notFound(r: ResourceDef, name: string): ApiError {
    return errors.notFound(r.resource, r.group, name);
  }

  private mustGet(r: ResourceDef, ns: string, name: string): Obj {
    const o = this.store.get(storageKey(r, ns, name));
    if (!o) throw this.notFound(r, name);
    return o;
  }

  get(r: ResourceDef, ns: string, name: string): Obj {
    const vw = this.viewOf(r);
    if (vw) return readDefaults(r, vw.v.fromStorage(this.get(vw.core, ns, name)));
    return readDefaults(r, clone(this.mustGet(r, ns, name)));
  }

  /** The object, or undefined (no 404). */
  find(r: ResourceDef, ns: string, name: string): Obj | undefined {
    const vw = this.viewOf(r);
    if (vw) {
      const o = this.find(vw.core, ns, name);
      return o && vw.v.fromStorage(o);
    }
    const o = this.store.get(storageKey(r, ns, name));
    return o && clone(o);
  }

  /** Admission for a subresource request that is not stored as such (e.g. serviceaccounts/token). */
  admitSubresource(r: ResourceDef, sub: string, ns: string, name: string, object: Obj): void {
    this.admit({ operation: 'CREATE', resource: r, subresource: sub, namespace: ns, name, object });
  }

  create(r: ResourceDef, ns: string, body: Obj): Obj {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw errors.badRequest('the request body must be a JSON or YAML object');
    const vw = this.viewOf(r);
    if (vw) {
      const o = clone(body);
      if (o.apiVersion !== undefined && o.apiVersion !== apiVersionOf(r))
        throw errors.badRequest(
          `the API version in the data (${String(o.apiVersion)}) does not match the expected API version (${apiVersionOf(r)})`,
        );
      this.checkFields(r, o, false);
      const causes = vw.v.validateCreate(o);
      if (causes.length) throw errors.invalid(r.kind, r.group, o.metadata?.name ?? '', causes);
      return vw.v.fromStorage(
        this.create(vw.core, ns, vw.v.toStorage({ ...o, apiVersion: apiVersionOf(r), kind: r.kind })),
      );
    }
    const o = clone(body);
    if (o.kind !== undefined && o.kind !== r.kind)
      throw errors.badRequest(
        `the API version in the data (${String(o.apiVersion)}) and kind (${String(o.kind)}) do not match the URL's resource ${r.resource}`,
      );
    if (o.apiVersion !== undefined && o.apiVersion !== apiVersionOf(r))
      throw errors.badRequest(
        `the API version in the data (${String(o.apiVersion)}) does not match the expected API version (${apiVersionOf(r)})`,
      );
    o.apiVersion = apiVersionOf(r);
    o.kind = r.kind;
    this.checkFields(r, o, false);
    const md = (o.metadata ??= {});
    if (typeof md !== 'object') throw errors.badRequest('metadata must be an object');
    if (r.namespaced) {
      if (md.namespace && md.namespace !== ns)
        throw errors.badRequest(
          `the namespace of the provided object does not match the namespace sent on the request`,
        );
      md.namespace = ns;
    } else delete md.namespace;
    if (!md.name && md.generateName) md.name = `${md.generateName}${randomSuffix()}`;
    if (r.custom?.terminating)
      throw errors.methodNotAllowed(`create not allowed while custom resource definition is terminating`);
    if (r.custom) {
      if (r.subresources.includes('status')) delete o.status;
      this.checkCustom(r, o);
    }
    if (builtin(r) === 'customresourcedefinitions') defaultCrd(o);
    const causes = validateObject(r, o);
    if (causes.length) throw errors.invalid(r.kind, r.group, md.name ?? '', causes);
    this.checkNamespace(r, ns);
    if (
      r.namespaced &&
      !r.review &&
      this.store.get(storageKey(this.res('', 'namespaces'), '', ns))?.metadata?.deletionTimestamp
    ) {
      throw errors.forbiddenObject(
        r.resource,
        r.group,
        md.name ?? '',
        `unable to create new content in namespace ${ns} because it is being terminated`,
      );
    }
    if (this.store.get(storageKey(r, ns, md.name))) throw errors.alreadyExists(r.resource, r.group, md.name);
    md.uid = randomUUID();
    md.creationTimestamp = rfc3339();
    md.generation = 1;
    delete md.resourceVersion;
    delete md.deletionTimestamp;
    delete md.deletionGracePeriodSeconds;
    // As upstream PrepareForCreate: status is the server's, except for Nodes, which kubelets register with status.
    if (r.subresources.includes('status') && builtin(r) !== 'nodes') delete o.status;
    applyDefaults(r, o);
    // A built-in kind's status is a struct Go always writes: `status: {}` until someone sets it.
    if (r.subresources.includes('status') && !r.custom && o.status === undefined) o.status = {};
    if (builtin(r) === 'priorityclasses') checkSingleDefault(o, this.store.list(storagePrefix(r)).items);
    if (builtin(r) === 'jobs') {
      const again = validateJob(o);
      if (again.length) throw errors.invalid(r.kind, r.group, md.name, again);
    }
    if (builtin(r) === 'daemonsets') stampTemplateGeneration(o);
    // DefaultStorageClass admission: a claim that names no class (not even "") gets the default one.
    if (builtin(r) === 'persistentvolumeclaims' && o.spec && o.spec.storageClassName === undefined) {
      const sc = defaultClass(this.store.list(storagePrefix(this.res('storage.k8s.io', 'storageclasses'))).items);
      if (sc) o.spec.storageClassName = sc.metadata.name;
    }
    if (builtin(r) === 'certificatesigningrequests') prepareCsr(o, this.user);
    if (builtin(r) === 'customresourcedefinitions') {
      // Deleting a definition first deletes its objects (the crd-cleanup controller removes this finalizer).
      md.finalizers = [...new Set([...((md.finalizers ?? []) as string[]), CLEANUP_FINALIZER])];
      o.status = this.definitionStatus(o);
    }
    if (builtin(r) === 'pods') admitPodLimits(o, this.store.list(storagePrefix(this.res('', 'limitranges'), ns)).items);
    if (builtin(r) === 'persistentvolumeclaims')
      admitClaimLimits(o, this.store.list(storagePrefix(this.res('', 'limitranges'), ns)).items);
    if (builtin(r) === 'pods') {
      addDefaultTolerations(o);
      admitServiceAccount(
        o,
        (ns2, name) => this.store.get(storageKey(this.res('', 'serviceaccounts'), ns2, name)),
        randomSuffix(),
      );
      admitPriority(
        o,
        (n) => this.store.get(storageKey(this.res('scheduling.k8s.io', 'priorityclasses'), '', n)),
        () => this.store.list(storagePrefix(this.res('scheduling.k8s.io', 'priorityclasses'))).items,
      );
      admitRuntimeClass(o, (name) => this.store.get(storageKey(this.res('node.k8s.io', 'runtimeclasses'), '', name)));
    }
    this.admit({ operation: 'CREATE', resource: r, subresource: '', namespace: ns, name: md.name, object: o });
    // Validation follows mutating admission upstream: a request above the limit LimitRanger defaulted is invalid.
    if (builtin(r) === 'pods') {
      const after = validateObject(r, o);
      if (after.length) throw errors.invalid(r.kind, r.group, md.name ?? '', after);
    }
    if (r.namespaced && !r.review) this.admitQuota(r, ns, o);
    if (builtin(r) === 'pods') validateMirrorPod(o);
    md.managedFields = this.managedFieldsFor(r, undefined, o, '');
    if (!md.managedFields.length) delete md.managedFields;
    if (builtin(r) === 'services') this.allocateService(o);
    if (this.dry) {
      // The response shows what would be allocated; nothing stays allocated.
      if (builtin(r) === 'services') this.releaseService(o);
      return clone(this.write.create(storageKey(r, ns, md.name), o));
    }
    const stored = this.store.create(storageKey(r, ns, md.name), o);
    if (builtin(r) === 'namespaces') this.runAs(SYSTEM_USER, () => this.createDefaultServiceAccount(md.name));
    return clone(stored);
  }

  private createDefaultServiceAccount(ns: string): void {
    const sa = this.res('', 'serviceaccounts');
    if (!this.store.get(storageKey(sa, ns, 'default'))) this.create(sa, ns, { metadata: { name: 'default' } });
  }

  /** The selectors of a list or watch as one predicate; bad selectors are 400s. */
  private matcher(r: ResourceDef, opts: ListOptions): (o: Obj) => boolean {
    let labelReqs, fieldReqs;
    try {
      labelReqs = opts.labelSelector ? parseLabelSelector(opts.labelSelector) : [];
      fieldReqs = opts.fieldSelector ? parseFieldSelector(opts.fieldSelector) : [];
    } catch (e) {
      if (e instanceof SelectorError) throw errors.badRequest(`unable to parse requirement: ${e.message}`);
      throw e;
    }
    for (const f of fieldReqs)
      if (!this.fieldSupported(r, f.field)) throw errors.badRequest(`field label not supported: ${f.field}`);
    return (o) => matchLabels(labelReqs, o.metadata?.labels) && matchFields(fieldReqs, this.fieldsOf(r, o));
  }

  list(r: ResourceDef, ns: string | undefined, opts: ListOptions = {}): Obj {
    const vw = this.viewOf(r);
    if (vw) {
      const l = this.list(vw.core, ns, Api.viewSelectors(vw.v, opts));
      const items = (l.items as Obj[]).map((o) => readDefaults(r, vw.v.fromStorage(o)));
      return { ...l, apiVersion: apiVersionOf(r), items };
    }
    const match = this.matcher(r, opts);
    let start = '';
    let token: number | undefined;
    if (opts.continue) {
      let c: { start: string; rv: number };
      try {
        c = JSON.parse(Buffer.from(opts.continue, 'base64url').toString()) as { start: string; rv: number };
      } catch {
        throw errors.badRequest('continue key is not valid: illegal base64 data');
      }
      start = c.start;
      token = c.rv;
    }
    // A past resourceVersion is read from the history: the one later pages of a list are read at, as etcd's snapshot
    // reads (an inconsistent token, rv -1, handed out when that version was gone, goes on from the current state), or
    // one asked for exactly.
    const prefix = storagePrefix(r, ns);
    const now = this.store.resourceVersion;
    const fromToken = token !== undefined && token > 0;
    const asked = fromToken ? token : opts.exactResourceVersion;
    const at = asked !== undefined && asked !== now ? asked : undefined;
    let items: Obj[];
    try {
      items = at === undefined ? this.store.list(prefix).items : byListKey(this.stateAt(r, prefix, at).values());
    } catch (e) {
      if (!fromToken || !(e instanceof ApiError) || e.code !== 410) throw e;
      throw new ApiError(410, 'Expired', CONTINUE_EXPIRED, undefined, { continue: continueToken(start, -1) });
    }
    const listRv = at ?? now;
    // Items come in key order, the order `start` was taken in: a page starts after it by binary search, and is
    // matched only as far as it reaches (one item more tells whether there is a next page).
    let i = start ? firstAfter(items, start) : 0;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const page: Obj[] = [];
    let more = false;
    for (; i < items.length; i++) {
      if (!match(items[i]!)) continue;
      if (page.length === limit) {
        more = true;
        break;
      }
      page.push(items[i]!);
    }
    const meta: Obj = { resourceVersion: String(listRv) };
    if (more) {
      meta.continue = continueToken(listKey(page[page.length - 1]!), listRv);
      // As upstream: the count is known only when no selector filters what remains.
      if (!opts.labelSelector && !opts.fieldSelector) meta.remainingItemCount = items.length - i;
    }
    return {
      kind: r.listKind,
      apiVersion: apiVersionOf(r),
      metadata: meta,
      items: page.map((o) => readDefaults(r, clone(o))),
    };
  }

  fieldSupported(r: ResourceDef, field: string): boolean {
    return field === 'metadata.name' || (field === 'metadata.namespace' && r.namespaced) || r.fields.includes(field);
  }

  fieldsOf(r: ResourceDef, o: Obj): Record<string, string> {
    const out: Record<string, string> = { 'metadata.name': o.metadata?.name ?? '' };
    if (r.namespaced) out['metadata.namespace'] = o.metadata?.namespace ?? '';
    for (const f of r.fields) out[f] = getPath(o, f) || (ZERO_OF_FIELD[f] ?? '');
    // A Job's selectable status.successful is its status.succeeded (upstream JobToSelectableFields).
    if (builtin(r) === 'jobs') out['status.successful'] = String(o.status?.succeeded ?? 0);
    // An Event's source is its source.component, or else its reporting controller (upstream ToSelectableFields).
    if (r.group === '' && builtin(r) === 'events')
      out.source = String(o.source?.component || o.reportingComponent || '');
    return out;
  }

  /** PUT. With sub='status' only status changes are taken; otherwise status changes are ignored. */
  update(r: ResourceDef, ns: string, name: string, body: Obj, sub?: WriteSub): Obj {
    const vw = this.viewOf(r);
    if (vw && isObject(body)) {
      const o = clone(body);
      this.checkFields(r, o, false);
      return vw.v.fromStorage(
        this.update(vw.core, ns, name, vw.v.toStorage({ ...o, apiVersion: apiVersionOf(vw.core), kind: r.kind }), sub),
      );
    }
    const cur = this.mustGet(r, ns, name);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw errors.badRequest('the request body must be a JSON or YAML object');
    if (body.kind !== undefined && body.kind !== r.kind)
      throw errors.badRequest(
        `the kind in the data (${String(body.kind)}) does not match the URL's resource ${r.resource}`,
      );
    if (body.metadata?.name !== undefined && body.metadata.name !== name)
      throw errors.badRequest(
        `the name of the object (${String(body.metadata.name)}) does not match the name on the URL (${name})`,
      );
    const expectedRv = body.metadata?.resourceVersion as string | undefined;
    if (expectedRv && expectedRv !== cur.metadata.resourceVersion)
      throw errors.conflict(
        r.resource,
        r.group,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    body = clone(body);
    this.checkFields(r, body, false);
    let next: Obj;
    if (sub === 'approval') {
      // CSR approval: only the conditions change.
      next = {
        ...clone(cur),
        status: { ...clone(cur.status ?? {}), conditions: clone(body.status?.conditions ?? []) },
      };
      next.metadata = statusWriteMetadata(cur, body, builtin(r));
      const causes = validateApproval(cur, next);
      if (causes.length) throw errors.invalid(r.kind, r.group, name, causes);
    } else if (sub === 'status') {
      next = { ...clone(cur), metadata: statusWriteMetadata(cur, body, builtin(r)), status: clone(body.status) };
      if (r.custom) this.checkCustom(r, next);
      if (builtin(r) === 'certificatesigningrequests') {
        const causes = validateCsrStatus(cur, next);
        if (causes.length) throw errors.invalid(r.kind, r.group, name, causes);
      }
    } else if (sub === 'ephemeralcontainers') {
      // Only spec.ephemeralContainers changes, and only by additions (upstream's ephemeralcontainers subresource).
      next = {
        ...clone(cur),
        spec: { ...clone(cur.spec), ephemeralContainers: clone(body.spec?.ephemeralContainers ?? []) },
      };
      for (const c of (next.spec.ephemeralContainers ?? []) as Obj[]) defaultContainer(c as never);
      const causes = validateEphemeralUpdate(cur, next);
      if (causes.length) throw errors.invalid(r.kind, r.group, name, causes);
      bumpGenerationOnSpecChange(cur, next);
    } else if (sub === 'finalize') {
      // namespaces/finalize: only spec.finalizers changes (the namespace controller's last step).
      next = { ...clone(cur), spec: { ...clone(cur.spec ?? {}), finalizers: clone(body.spec?.finalizers ?? []) } };
    } else if (sub === 'resize') {
      next = applyResize(cur, body);
      const causes = validatePodResize(cur, next);
      if (causes.length) throw errors.invalid(r.kind, r.group, name, causes);
      bumpGenerationOnSpecChange(cur, next);
    } else {
      next = body;
      next.apiVersion = apiVersionOf(r);
      next.kind = r.kind;
      const md = (next.metadata ??= {});
      md.name = name;
      if (r.namespaced) md.namespace = ns;
      for (const k of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation']) {
        if (cur.metadata[k] === undefined) delete md[k];
        else md[k] = cur.metadata[k];
      }
      if (r.subresources.includes('status')) next.status = clone(cur.status);
      // A namespace's finalizers change only through namespaces/finalize.
      if (builtin(r) === 'namespaces')
        next.spec = { ...(next.spec ?? {}), finalizers: clone(cur.spec?.finalizers ?? []) };
      applyDefaults(r, next);
      if (builtin(r) === 'pods') this.checkPodUpdate(cur, next);
      if (
        SELECTOR_IMMUTABLE.has(builtin(r)) &&
        JSON.stringify(next.spec?.selector ?? null) !== JSON.stringify(cur.spec?.selector ?? null)
      ) {
        throw errors.invalid(r.kind, r.group, name, [
          {
            field: 'spec.selector',
            message: `Invalid value: ${JSON.stringify(next.spec?.selector ?? null)}: field is immutable`,
          },
        ]);
      }
      if (builtin(r) === 'daemonsets') stampTemplateGeneration(next, cur);
      const updateRule = UPDATE_RULES[builtin(r)];
      if (updateRule) {
        const causes = updateRule(next, cur);
        if (causes.length) throw errors.invalid(r.kind, r.group, name, causes);
        if (builtin(r) === 'priorityclasses') checkSingleDefault(next, this.store.list(storagePrefix(r)).items);
      }
      if (
        r.group === 'rbac.authorization.k8s.io' &&
        r.resource.endsWith('bindings') &&
        JSON.stringify(next.roleRef ?? null) !== JSON.stringify(cur.roleRef ?? null)
      ) {
        const ref = (next.roleRef ?? {}) as Obj;
        throw errors.invalid(r.kind, r.group, name, [
          {
            field: 'roleRef',
            message: `Invalid value: rbac.RoleRef{APIGroup:${JSON.stringify(String(ref.apiGroup ?? ''))}, Kind:${JSON.stringify(String(ref.kind ?? ''))}, Name:${JSON.stringify(String(ref.name ?? ''))}}: cannot change roleRef`,
          },
        ]);
      }
      if (r.custom) this.checkCustom(r, next);
      const causes = validateObject(r, next);
      if (causes.length) throw errors.invalid(r.kind, r.group, name, causes);
      if (builtin(r) === 'customresourcedefinitions') next.status = this.definitionStatus(next);
      if (builtin(r) === 'services') {
        this.allocateService(next, cur);
        if (this.dry) {
          this.releaseService(next);
          this.reserveService(cur);
        }
      }
      if (r.custom ? customChanged(r, next, cur) : specChanged(cur.spec, next.spec))
        md.generation = (cur.metadata.generation ?? 1) + 1;
    }
    this.admit({
      operation: 'UPDATE',
      resource: r,
      subresource: sub ?? '',
      namespace: ns,
      name,
      object: next,
      oldObject: cur,
    });
    // The last finalizer gone from an object being deleted: it goes away now.
    if (
      next.metadata.deletionTimestamp &&
      !(next.metadata.finalizers ?? []).length &&
      (builtin(r) !== 'pods' || !cur.spec?.nodeName || next.metadata.deletionGracePeriodSeconds === 0)
    ) {
      if (cur.metadata.finalizers?.length) return clone(this.remove(r, ns, name));
      // A terminating namespace whose last spec finalizer went (namespaces/finalize).
      if (builtin(r) === 'namespaces' && !(next.spec?.finalizers ?? []).length && (cur.spec?.finalizers ?? []).length)
        return clone(this.remove(r, ns, name));
    }
    next.metadata.managedFields = this.managedFieldsFor(r, cur, next, sub ?? '');
    if (!next.metadata.managedFields.length) delete next.metadata.managedFields;
    // A write that changes nothing keeps the resourceVersion and sends no event (the second identical apply).
    if (sameObject(cur, next)) return clone(cur);
    return clone(this.write.update(storageKey(r, ns, name), next));
  }

  private checkPodUpdate(cur: Obj, next: Obj): void {
    const strip = (s: Obj): string => {
      const c = clone(s);
      for (const cs of [...(c.containers ?? []), ...(c.initContainers ?? [])] as Obj[]) delete cs.image;
      delete c.activeDeadlineSeconds;
      delete c.tolerations;
      delete c.terminationGracePeriodSeconds;
      // Field order is the encoding's (a protobuf update decodes in field-number order), not a change; nor is an
      // empty object or list where there was none (`resources: {}`): upstream compares decoded structs, and its
      // semantic equality takes empty and nil as equal.
      return semanticJson(c);
    };
    if (strip(cur.spec) !== strip(next.spec)) {
      throw errors.invalid('Pod', '', cur.metadata.name, [
        {
          field: 'spec',
          reason: 'FieldValueForbidden',
          message:
            'Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
        },
      ]);
    }
  }

  patch(r: ResourceDef, ns: string, name: string, type: PatchType, patch: unknown, sub?: WriteSub): Obj {
    // No Go struct to merge by: upstream answers 415 for strategic merge patches of custom resources.
    if (r.custom && type === 'strategic')
      throw new ApiError(
        415,
        'UnsupportedMediaType',
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      );
    const cur = this.get(r, ns, name);
    let next: Obj;
    try {
      next = (
        type === 'json'
          ? jsonPatch(cur, patch)
          : type === 'merge'
            ? mergePatch(cur, patch)
            : r.custom
              ? strategicMerge(cur, patch)
              : strategicMergeBySchema(cur, patch, patchSchemaOf(kindSchema(r)))
      ) as Obj;
    } catch (e) {
      if (e instanceof PatchDecodeError) throw errors.badRequest(e.message);
      if (e instanceof PatchError)
        throw type === 'json'
          ? errors.patchFailed()
          : errors.badRequest(`the server rejected our request due to an error in our request: ${e.message}`);
      throw e;
    }
    if (typeof next !== 'object' || next === null || Array.isArray(next))
      throw errors.badRequest('the patch produced something that is not an object');
    this.checkFields(r, next, true);
    // A resourceVersion in the patch is a precondition; without one the patch applies to the current object.
    const pRv = (patch as Obj)?.metadata?.resourceVersion;
    if (pRv === undefined || type === 'json')
      next.metadata = { ...next.metadata, resourceVersion: cur.metadata.resourceVersion };
    // A uid in the patch is a precondition; `uid: null` (a get -o yaml | apply round trip) is not, as upstream.
    const uidPre = (patch as Obj)?.metadata?.uid;
    if (uidPre !== undefined && uidPre !== null && uidPre !== cur.metadata.uid)
      throw errors.conflict(
        r.resource,
        r.group,
        name,
        `Precondition failed: UID in precondition: ${String(uidPre)}, UID in object meta: ${String(cur.metadata.uid)}`,
      );
    return this.update(r, ns, name, next, sub);
  }

  /**
   * Server-side apply (PATCH application/apply-patch+yaml) of `config` by the current manager:
   * creates the object when it does not exist; 409 on fields other managers own unless `force`.
   */
  apply(
    r: ResourceDef,
    ns: string,
    name: string,
    config: unknown,
    force: boolean,
    sub?: WriteSub,
  ): { object: Obj; created: boolean } {
    if (!isObject(config)) throw errors.badRequest('the apply configuration must be a YAML or JSON object');
    const cfg = clone(config as Obj);
    if (cfg.apiVersion !== apiVersionOf(r) || cfg.kind !== r.kind)
      throw errors.badRequest(
        `the apply configuration's apiVersion and kind (${String(cfg.apiVersion ?? '')}, ${String(cfg.kind ?? '')}) must be set and match the URL's resource (${apiVersionOf(r)}, ${r.kind})`,
      );
    const md = isObject(cfg.metadata) ? (cfg.metadata as Obj) : (cfg.metadata = {});
    if (md.name !== undefined && md.name !== name)
      throw errors.badRequest(
        `the name of the object (${String(md.name)}) does not match the name on the URL (${name})`,
      );
    if (r.namespaced && md.namespace !== undefined && md.namespace !== ns)
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    md.name = name;
    if (r.namespaced) md.namespace = ns;
    this.checkFields(r, cfg, 'apply');
    const cur = this.find(r, ns, name);
    if (!cur && sub) throw this.notFound(r, name);
    const { object, managedFields } = applyConfig(r, cur, cfg, {
      manager: this.manager,
      subresource: sub ?? '',
      now: rfc3339(),
      force,
    });
    this.applied = managedFields;
    if (!cur) return { object: this.create(r, ns, object), created: true };
    object.metadata = { ...object.metadata, resourceVersion: cur.metadata.resourceVersion };
    return { object: this.update(r, ns, name, object, sub), created: false };
  }

  private remove(r: ResourceDef, ns: string, name: string): Obj {
    try {
      const o = this.write.delete(storageKey(r, ns, name));
      if (this.dry) return o;
      if (builtin(r) === 'services') this.releaseService(o);
      if (builtin(r) === 'namespaces') this.purgeNamespace(name);
      return o;
    } catch (e) {
      if (e instanceof StoreError && e.reason === 'NotFound') throw this.notFound(r, name);
      throw e;
    }
  }

  /** What a namespace still holds when it is removed (the namespace controller empties it first; this is the safety net). */
  private purgeNamespace(ns: string): void {
    for (const r of this.storedResources()) {
      if (!r.namespaced) continue;
      for (const o of this.store.list(storagePrefix(r, ns)).items) this.remove(r, ns, o.metadata.name);
    }
  }

  /** DELETE. Returns the object and whether it is gone (false: marked for deletion). */
  delete(r: ResourceDef, ns: string, name: string, opts: DeleteOptions = {}): { object: Obj; deleted: boolean } {
    const vw = this.viewOf(r);
    if (vw) {
      const d = this.delete(vw.core, ns, name, opts);
      return { ...d, object: vw.v.fromStorage(d.object) };
    }
    const cur = this.mustGet(r, ns, name);
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== cur.metadata.uid)
      throw errors.conflict(
        r.resource,
        r.group,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata.uid}`,
      );
    if (pre.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion)
      throw errors.conflict(
        r.resource,
        r.group,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion}`,
      );
    this.admit({ operation: 'DELETE', resource: r, subresource: '', namespace: ns, name, oldObject: cur });
    if (opts.propagationPolicy === 'Orphan' && !this.dry) this.orphanDependents(cur);
    if (opts.propagationPolicy === 'Foreground' && !cur.metadata.deletionTimestamp) {
      // The garbage collector removes the finalizer once the blocking dependents are gone.
      const next = clone(cur);
      next.metadata.finalizers = [...new Set([...(next.metadata.finalizers ?? []), 'foregroundDeletion'])];
      if (next.metadata.generation > 0) next.metadata.generation += 1;
      next.metadata.deletionTimestamp = rfc3339();
      next.metadata.deletionGracePeriodSeconds = 0;
      return { object: clone(this.write.update(storageKey(r, ns, name), next)), deleted: false };
    }
    if (builtin(r) === 'namespaces') {
      if (IMMORTAL_NAMESPACES.includes(name))
        throw errors.forbiddenObject('namespaces', '', name, 'this namespace may not be deleted');
      // Terminating until the namespace controller has emptied it and removed its "kubernetes" finalizer.
      if ((cur.spec?.finalizers ?? []).length) {
        if (cur.metadata.deletionTimestamp) return { object: clone(cur), deleted: false };
        const next = clone(cur);
        next.metadata.deletionTimestamp = rfc3339();
        next.metadata.deletionGracePeriodSeconds = 0;
        next.status = { ...(next.status ?? {}), phase: 'Terminating' };
        return { object: clone(this.write.update(storageKey(r, ns, name), next)), deleted: false };
      }
    }
    const finalizers = (cur.metadata.finalizers ?? []) as string[];
    let grace = 0;
    if (builtin(r) === 'pods') {
      grace = opts.gracePeriodSeconds ?? cur.spec?.terminationGracePeriodSeconds ?? 30;
      // A pod never bound to a node has no kubelet to stop it; one that already finished needs no grace.
      if (!cur.spec?.nodeName || ['Succeeded', 'Failed'].includes(cur.status?.phase)) grace = 0;
    }
    if (grace > 0 || finalizers.length) {
      const curGrace = cur.metadata.deletionGracePeriodSeconds as number | undefined;
      // Already terminating: only a shorter grace period changes anything.
      if (cur.metadata.deletionTimestamp && (curGrace === undefined || grace >= curGrace))
        return { object: clone(cur), deleted: false };
      const next = clone(cur);
      // Controllers must see that the object is going: the first deletionTimestamp bumps its generation.
      if (!cur.metadata.deletionTimestamp && cur.metadata.generation > 0) next.metadata.generation += 1;
      next.metadata.deletionTimestamp = rfc3339(new Date(Date.now() + grace * 1000));
      next.metadata.deletionGracePeriodSeconds = grace;
      return { object: clone(this.write.update(storageKey(r, ns, name), next)), deleted: false };
    }
    return { object: clone(this.remove(r, ns, name)), deleted: true };
  }

  /** DELETE on a collection: each object the selectors match, as one delete each; returns what was deleted. */
  deleteCollection(r: ResourceDef, ns: string | undefined, list: ListOptions, opts: DeleteOptions = {}): Obj {
    const vw = this.viewOf(r);
    if (vw) {
      const l = this.deleteCollection(vw.core, ns, Api.viewSelectors(vw.v, list), opts);
      return { ...l, apiVersion: apiVersionOf(r), items: ((l.items ?? []) as Obj[]).map((o) => vw.v.fromStorage(o)) };
    }
    const items: Obj[] = [];
    for (const o of this.list(r, ns, { labelSelector: list.labelSelector, fieldSelector: list.fieldSelector })
      .items as Obj[]) {
      try {
        items.push(this.delete(r, o.metadata.namespace ?? '', o.metadata.name, opts).object);
      } catch (e) {
        // Gone meanwhile: nothing to do for it.
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
    return {
      kind: r.listKind,
      apiVersion: apiVersionOf(r),
      metadata: { resourceVersion: String(this.store.resourceVersion) },
      items,
    };
  }

  /** Takes `owner` out of its dependents' ownerReferences (propagationPolicy=Orphan). */
  private orphanDependents(owner: Obj): void {
    const uid = owner.metadata.uid as string;
    for (const r of this.storedResources()) {
      if (r.review) continue;
      for (const o of this.store.list(storagePrefix(r, owner.metadata.namespace)).items) {
        const refs = (o.metadata.ownerReferences ?? []) as Obj[];
        if (!refs.some((x) => x.uid === uid)) continue;
        const next = clone(o);
        next.metadata.ownerReferences = refs.filter((x) => x.uid !== uid);
        if (!next.metadata.ownerReferences.length) delete next.metadata.ownerReferences;
        this.store.update(storageKey(r, o.metadata.namespace ?? '', o.metadata.name), next);
      }
    }
  }

  /** POST pods/{name}/binding. */
  bind(ns: string, name: string, binding: Obj): void {
    const pods = this.res('', 'pods');
    const pod = this.mustGet(pods, ns, name);
    this.admit({
      operation: 'CREATE',
      resource: pods,
      subresource: 'binding',
      namespace: ns,
      name,
      object: binding,
      oldObject: pod,
    });
    const node = binding?.target?.name;
    if (typeof node !== 'string' || !node)
      throw errors.invalid('Binding', '', name, [
        { field: 'target.name', reason: 'FieldValueRequired', message: 'Required value' },
      ]);
    if (pod.spec.nodeName)
      throw errors.conflict(
        'pods/binding',
        '',
        name,
        `pod ${name} is already assigned to node "${String(pod.spec.nodeName)}"`,
      );
    if (pod.metadata.deletionTimestamp)
      throw errors.conflict('pods/binding', '', name, `pod ${name} is being deleted, cannot be assigned to a host`);
    const next = clone(pod);
    next.spec.nodeName = node;
    const conds = ((next.status.conditions ?? []) as Obj[]).filter((c) => c.type !== 'PodScheduled');
    conds.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339() });
    next.status.conditions = conds;
    this.write.update(storageKey(pods, ns, name), next);
  }

  /** Objects under prefix as they were at rv, by storage key; throws 410 Expired when the history does not reach back. */
  private stateAt(r: ResourceDef, prefix: string, rv: number): Map<string, Obj> {
    const state = new Map<string, Obj>();
    for (const o of this.store.list(prefix).items)
      state.set(storageKey(r, o.metadata.namespace ?? '', o.metadata.name), o);
    // Walk history backwards to the object versions as of rv.
    for (const e of [...this.historySince(prefix, rv)].reverse()) {
      if (e.type === 'ADDED') state.delete(e.key);
      else state.set(e.key, e.prev!);
    }
    return state;
  }

  private historySince(prefix: string, rv: number): StoreEvent[] {
    try {
      return this.store.eventsSince(prefix, rv);
    } catch (e) {
      if (e instanceof StoreError && e.reason === 'Expired') throw errors.expired(e.message);
      throw e;
    }
  }

  /** Watch events for a resource (optionally one namespace), filtered by selectors, from an RV. */
  watch(
    r: ResourceDef,
    ns: string | undefined,
    opts: ListOptions & { resourceVersion?: string },
    fn: (type: string, o: Obj) => void,
  ): () => void {
    const vw = this.viewOf(r);
    if (vw)
      return this.watch(vw.core, ns, Api.viewSelectors(vw.v, opts), (type, o) =>
        fn(type, type === 'BOOKMARK' || type === 'ERROR' ? o : vw.v.fromStorage(o)),
      );
    const match = this.matcher(r, opts);
    const rv = opts.resourceVersion ? Number(opts.resourceVersion) : 0;
    if (!Number.isFinite(rv) || rv < 0) throw errors.badRequest(`invalid resource version "${opts.resourceVersion!}"`);
    const prefix = storagePrefix(r, ns);
    // What matched the selector as of rv, so that leaving it is a DELETED and entering it an ADDED (as upstream).
    const matched = new Set<string>();
    const replay = rv > 0 ? this.historySince(prefix, rv) : [];
    const current = this.store.list(prefix).items;
    if (rv > 0) {
      const touched = new Set(replay.map((e) => e.key));
      for (const [k, o] of this.stateAt(r, prefix, rv)) if (touched.has(k) && match(o)) matched.add(o.metadata.uid);
      for (const o of current)
        if (!touched.has(storageKey(r, o.metadata.namespace ?? '', o.metadata.name)) && match(o))
          matched.add(o.metadata.uid);
    }
    const onEvent = (e: StoreEvent): void => {
      const uid = e.object.metadata?.uid as string;
      const m = match(e.object);
      const was = matched.has(uid);
      if (e.type === 'DELETED') {
        if (was || m) fn('DELETED', clone(e.object));
        matched.delete(uid);
      } else if (m) {
        matched.add(uid);
        fn(was ? 'MODIFIED' : 'ADDED', clone(e.object));
      } else if (was) {
        matched.delete(uid);
        fn('DELETED', clone(e.object));
      }
    };
    if (rv === 0) {
      // No resourceVersion: the current state as ADDED events, then changes.
      for (const o of current)
        if (match(o)) {
          matched.add(o.metadata.uid);
          fn('ADDED', clone(o));
        }
    } else for (const e of replay) onEvent(e);
    return this.store.watch(prefix, 0, onEvent);
  }
}

/** A listed object's place in its list: `<namespace>/<name>`, the part of its storage key after the resource. */
const listKey = (o: Obj): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Objects in list-key order (byte order, as the store's). */
function byListKey(objs: Iterable<Obj>): Obj[] {
  return [...objs]
    .map((o) => ({ o, k: listKey(o) }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
    .map((x) => x.o);
}

const continueToken = (start: string, rv: number): string =>
  Buffer.from(JSON.stringify({ start, rv })).toString('base64url');

/** Upstream's text (etcd3 store) for a continue token whose resourceVersion was compacted away. */
const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** Index of the first item (in key order) whose list key is past `start`. */
const firstAfter = (items: readonly Obj[], start: string): number =>
  firstIndex(items.length, (i) => listKey(items[i]!) <= start);

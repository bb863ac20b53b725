// Validation with field paths, for the fields the dev apiserver checks.
import { type BlockList, isIP } from 'node:net';

import { checkableIP, cidrBlockList } from '../../kube/cidr.js';
import { checkDns1123Label, checkDns1123Subdomain } from '../../kube/names.js';
import { PROTOCOLS, validateIntOrPortName, validatePodSpec, validatePortNumber } from '../../kube/pod-validation.js';
import { validateAnnotations, validateLabels } from '../../kube/validation.js';
import { validatePriorityClass } from '../admission/priority.js';
import { validateRuntimeClass } from '../admission/runtime-class.js';
import { validateWebhookConfiguration } from '../admission/webhook/configuration.js';
import { validateCsr } from '../certificates/csr.js';
import { validateCrd } from '../crd/definition.js';
import type { ResourceDef } from '../resources.js';
import type { Obj } from '../storage/store.js';
import { validateControllerRevision, validateDaemonSet, validateStatefulSet } from './apps.js';
import type { Cause } from './errors.js';
import { validateCronJob, validateJob } from './jobs.js';
import { goIntOrString, isZero, validateIntOrPercent, validateSelectorAndTemplate } from './workload-validation.js';

export const MAX_DATA_SIZE = 1024 * 1024;
const DNS_LABEL_NAMED = new Set(['namespaces', 'services']);
/** RBAC objects and CSRs are named like path segments (system:node-proxier, node-csr-Iq-yt3a…), not DNS names. */
const PATH_SEGMENT_NAMED = new Set([
  'clusterroles',
  'clusterrolebindings',
  'roles',
  'rolebindings',
  'certificatesigningrequests',
]);

function checkPathSegment(name: string): string | undefined {
  if (name === '.' || name === '..') return `may not be '${name}'`;
  if (/[/%]/.test(name)) return `may not contain '${name.includes('/') ? '/' : '%'}'`;
  return undefined;
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

const SPECIAL_IPS: [BlockList, (ip: string) => string][] = [
  [cidrBlockList(['0.0.0.0/32', '::/128']), (ip) => `may not be unspecified (${ip})`],
  [cidrBlockList(['127.0.0.0/8', '::1/128']), () => 'may not be in the loopback range (127.0.0.0/8, ::1/128)'],
  [
    cidrBlockList(['169.254.0.0/16', 'fe80::/10']),
    () => 'may not be in the link-local range (169.254.0.0/16, fe80::/10)',
  ],
  // Go's IsLinkLocalMulticast: 224.0.0.0/24, and ff02::/16 with any flags (ff12::, ff32::, …).
  [
    cidrBlockList(['224.0.0.0/24', ...Array.from({ length: 16 }, (_, f) => `ff${f.toString(16)}2::/16`)]),
    () => 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
  ],
];

/** Upstream's ValidateNonSpecialIP: no unspecified, loopback, link-local or link-local multicast address. */
export function validateNonSpecialIP(ip: string, field: string): Cause[] {
  const addr = checkableIP(ip);
  if (!addr)
    return [
      {
        field,
        message: `Invalid value: ${JSON.stringify(ip)}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
      },
    ];
  return SPECIAL_IPS.filter(([ranges]) => ranges.check(addr.ip, addr.type)).map(([, why]) => ({
    field,
    message: `Invalid value: ${JSON.stringify(ip)}: ${why(ip)}`,
  }));
}

/** ValidateNodeUpdate's immutable parts: podCIDR(s) and providerID only go from unset to set. */
export function validateNodeUpdate(next: Obj, cur: Obj): Cause[] {
  const causes: Cause[] = [];
  const cidrs = (o: Obj): string[] =>
    Array.isArray(o.spec?.podCIDRs) ? (o.spec.podCIDRs as string[]) : o.spec?.podCIDR ? [String(o.spec.podCIDR)] : [];
  const single = (o: Obj): string => String(o.spec?.podCIDR ?? '');
  const changed =
    JSON.stringify(cidrs(next)) !== JSON.stringify(cidrs(cur)) || (single(cur) !== '' && single(next) !== single(cur));
  if ((cidrs(cur).length || single(cur)) && changed)
    causes.push({
      field: 'spec.podCIDRs',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: node updates may not change podCIDR except from "" to valid',
    });
  const provider = (o: Obj): string => String(o.spec?.providerID ?? '');
  if (provider(cur) && provider(next) !== provider(cur))
    causes.push({
      field: 'spec.providerID',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: node updates may not change providerID except from "" to valid',
    });
  return causes;
}

/** ValidateService: type, ports (numbers, protocols, names required and unique when several), selector labels. */
function validateService(spec: Obj): Cause[] {
  const causes: Cause[] = [];
  if (spec.type !== undefined && !SERVICE_TYPES.includes(spec.type))
    causes.push({
      field: 'spec.type',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(spec.type)}: supported values: ${SERVICE_TYPES.map((x) => JSON.stringify(x)).join(', ')}`,
    });
  const ports = (Array.isArray(spec.ports) ? spec.ports : []) as Obj[];
  if (!ports.length && spec.type !== 'ExternalName' && spec.clusterIP !== 'None')
    causes.push({ field: 'spec.ports', reason: 'FieldValueRequired', message: 'Required value' });
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const f = `spec.ports[${i}]`;
    if (ports.length > 1 && (typeof p.name !== 'string' || p.name === ''))
      causes.push({ field: `${f}.name`, reason: 'FieldValueRequired', message: 'Required value' });
    else if (typeof p.name === 'string' && p.name) {
      // A Service port name is a DNS label (it becomes an SRV name), not an IANA service name as container ports are: `kubectl create service --tcp=80:8080` names it "80-8080".
      const bad = checkDns1123Label(p.name);
      if (bad) causes.push({ field: `${f}.name`, message: `Invalid value: ${JSON.stringify(p.name)}: ${bad}` });
      if (names.has(p.name))
        causes.push({
          field: `${f}.name`,
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: ${JSON.stringify(p.name)}`,
        });
      names.add(p.name);
    }
    causes.push(...validatePortNumber(p.port, `${f}.port`));
    if (p.protocol !== undefined && !PROTOCOLS.includes(p.protocol))
      causes.push({
        field: `${f}.protocol`,
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(p.protocol)}: supported values: ${PROTOCOLS.map((x) => JSON.stringify(x)).join(', ')}`,
      });
    // 0 and "" are defaulted to the port, as upstream does before it validates.
    if (p.targetPort !== undefined && p.targetPort !== 0 && p.targetPort !== '')
      causes.push(...validateIntOrPortName(p.targetPort, `${f}.targetPort`));
    if (p.nodePort !== undefined && p.nodePort !== 0) causes.push(...validatePortNumber(p.nodePort, `${f}.nodePort`));
  });
  causes.push(...validateLabels(spec.selector, 'spec.selector'));
  ((Array.isArray(spec.externalIPs) ? spec.externalIPs : []) as unknown[]).forEach((ip, i) =>
    causes.push(...validateNonSpecialIP(String(ip), `spec.externalIPs[${i}]`)),
  );
  if (spec.sessionAffinity !== undefined && !['ClientIP', 'None'].includes(spec.sessionAffinity))
    causes.push({
      field: 'spec.sessionAffinity',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(spec.sessionAffinity)}: supported values: "ClientIP", "None"`,
    });
  return causes;
}

/** upstream ValidateClusterTrustBundleName: a signer's bundle is named `<signer with ':' for '/'>:<subdomain>`. */
function checkClusterTrustBundleName(name: string, signerName: unknown): string | undefined {
  if (typeof signerName !== 'string' || signerName === '')
    return name.includes(':')
      ? 'ClusterTrustBundle without signer name must not have ":" in its name'
      : checkDns1123Subdomain(name);
  const prefix = `${signerName.replaceAll('/', ':')}:`;
  if (!name.startsWith(prefix))
    return `ClusterTrustBundle for signerName ${signerName} must be named with prefix ${prefix}`;
  return checkDns1123Subdomain(name.slice(prefix.length));
}

export function validateObject(r: ResourceDef, o: Obj): Cause[] {
  const causes: Cause[] = [];
  const name = o.metadata?.name;
  if (typeof name !== 'string' || name === '')
    causes.push({
      field: 'metadata.name',
      reason: 'FieldValueRequired',
      message: 'Required value: name or generateName is required',
    });
  else {
    const bad =
      r.resource === 'ipaddresses'
        ? checkIPAddressName(name)
        : r.resource === 'clustertrustbundles'
          ? checkClusterTrustBundleName(name, o.spec?.signerName)
          : PATH_SEGMENT_NAMED.has(r.resource)
            ? checkPathSegment(name)
            : DNS_LABEL_NAMED.has(r.resource)
              ? checkDns1123Label(name)
              : checkDns1123Subdomain(name);
    if (bad) causes.push({ field: 'metadata.name', message: `Invalid value: "${name}": ${bad}` });
  }
  causes.push(
    ...validateLabels(o.metadata?.labels, 'metadata.labels'),
    ...validateAnnotations(o.metadata?.annotations, 'metadata.annotations'),
  );
  // Custom resources: their definition's schema is checked by the Api (crd/validation.ts).
  if (r.custom) return causes;
  if (r.group === 'apiextensions.k8s.io' && r.resource === 'customresourcedefinitions') causes.push(...validateCrd(o));
  if (r.resource === 'pods') causes.push(...validatePodSpec(o.spec, 'spec'));
  if (r.resource === 'deployments' || r.resource === 'replicasets') causes.push(...validateWorkload(o));
  if (r.resource === 'replicationcontrollers') causes.push(...validateReplicationController(o));
  // core.MaxSecretSize: ConfigMaps and Secrets hold at most 1 MiB of data.
  if (r.resource === 'configmaps' || r.resource === 'secrets') {
    let size = 0;
    for (const f of ['data', 'binaryData', 'stringData'])
      for (const [k, v] of Object.entries((o[f] ?? {}) as Record<string, unknown>))
        size +=
          k.length +
          (typeof v === 'string'
            ? f === 'data' && r.resource === 'secrets'
              ? Math.floor((v.length * 3) / 4)
              : Buffer.byteLength(v)
            : 0);
    if (size > MAX_DATA_SIZE)
      causes.push({
        field: r.resource === 'secrets' ? 'data' : '[]',
        reason: 'FieldValueTooLong',
        message: `Too long: may not be more than ${MAX_DATA_SIZE} bytes`,
      });
  }
  if (r.resource === 'services') causes.push(...validateService(o.spec ?? {}));
  if (r.resource === 'certificatesigningrequests') causes.push(...validateCsr(o));
  if (r.resource === 'runtimeclasses') causes.push(...validateRuntimeClass(o));
  if (r.resource === 'daemonsets') causes.push(...validateDaemonSet(o));
  if (r.resource === 'statefulsets') causes.push(...validateStatefulSet(o));
  if (r.resource === 'controllerrevisions') causes.push(...validateControllerRevision(o));
  if (r.resource === 'jobs') causes.push(...validateJob(o));
  if (r.resource === 'cronjobs') causes.push(...validateCronJob(o));
  if (r.resource === 'poddisruptionbudgets') causes.push(...validatePdb(o.spec ?? {}));
  if (r.resource === 'priorityclasses') causes.push(...validatePriorityClass(o));
  if (r.resource === 'ipaddresses') causes.push(...validateIPAddressSpec(o));
  if (r.resource === 'mutatingwebhookconfigurations' || r.resource === 'validatingwebhookconfigurations')
    causes.push(...validateWebhookConfiguration(o, r.resource === 'mutatingwebhookconfigurations'));
  if (r.resource === 'configmaps' || r.resource === 'secrets') {
    for (const f of ['data', 'binaryData', 'stringData']) {
      for (const k of Object.keys((o[f] ?? {}) as Record<string, unknown>)) {
        if (!CONFIG_KEY.test(k) || k.length > 253)
          causes.push({
            field: `${f === 'stringData' ? 'data' : f}[${k}]`,
            message: `Invalid value: ${JSON.stringify(k)}: ${k.length > 253 ? 'must be no more than 253 characters' : CONFIG_KEY_MSG}`,
          });
      }
    }
  }
  return causes;
}

/** apps/v1 Deployment and ReplicaSet: selector required and matching the template, replicas >= 0, the pod template. */
/** ValidatePodDisruptionBudgetSpec: one of minAvailable and maxUnavailable, each a non-negative int or a percent up to 100%. */
function validatePdb(spec: Obj): Cause[] {
  const causes: Cause[] = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined)
    causes.push({
      field: 'spec',
      message: `Invalid value: ${JSON.stringify(spec)}: minAvailable and maxUnavailable cannot be both set`,
    });
  for (const f of ['minAvailable', 'maxUnavailable']) causes.push(...validateIntOrPercent(spec[f], `spec.${f}`));
  if (
    spec.unhealthyPodEvictionPolicy !== undefined &&
    !['IfHealthyBudget', 'AlwaysAllow'].includes(spec.unhealthyPodEvictionPolicy)
  )
    causes.push({
      field: 'spec.unhealthyPodEvictionPolicy',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(spec.unhealthyPodEvictionPolicy)}: supported values: "AlwaysAllow", "IfHealthyBudget"`,
    });
  return causes;
}

/**
 * ValidateConfigMapUpdate and ValidateSecretUpdate: once `immutable` is true it stays, and so do the data; a Secret's
 * type never changes.
 */
export function validateImmutableDataUpdate(next: Obj, cur: Obj): Cause[] {
  const causes: Cause[] = [];
  const forbidden = (field: string): Cause => ({
    field,
    reason: 'FieldValueForbidden',
    message: 'Forbidden: field is immutable when `immutable` is set',
  });
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
  if (cur.kind === 'Secret' && (next.type ?? 'Opaque') !== (cur.type ?? 'Opaque'))
    causes.push({ field: 'type', message: `Invalid value: ${JSON.stringify(next.type ?? '')}: field is immutable` });
  if (cur.immutable === true) {
    if (next.immutable !== true) causes.push(forbidden('immutable'));
    if (!same(next.data, cur.data)) causes.push(forbidden('data'));
    if (cur.kind === 'ConfigMap' && !same(next.binaryData, cur.binaryData)) causes.push(forbidden('binaryData'));
  }
  return causes;
}

/** ValidateIPAddressName: an IP address in its canonical form. */
function checkIPAddressName(name: string): string | undefined {
  const family = isIP(name);
  if (!family) return 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
  const canonical = family === 4 ? name : new URL(`http://[${name}]/`).hostname.slice(1, -1);
  if (family === 4 && /(^|\.)0\d/.test(name)) return 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
  return canonical === name ? undefined : `must be in canonical form ("${canonical}")`;
}

/** An IPAddress names what holds it: spec.parentRef with a resource and a name. */
function validateIPAddressSpec(o: Obj): Cause[] {
  const ref = o.spec?.parentRef as Obj | undefined;
  if (!ref) return [{ field: 'spec.parentRef', reason: 'FieldValueRequired', message: 'Required value' }];
  const causes: Cause[] = [];
  for (const f of ['resource', 'name'])
    if (!ref[f]) causes.push({ field: `spec.parentRef.${f}`, reason: 'FieldValueRequired', message: 'Required value' });
  return causes;
}

/** ValidateReplicationControllerSpec: a non-empty selector map the template's labels match, replicas >= 0. */
function validateReplicationController(o: Obj): Cause[] {
  const spec = (o.spec ?? {}) as Obj;
  const causes: Cause[] = [];
  if (spec.replicas !== undefined && (!Number.isInteger(spec.replicas) || spec.replicas < 0))
    causes.push({
      field: 'spec.replicas',
      message: `Invalid value: ${JSON.stringify(spec.replicas)}: must be greater than or equal to 0`,
    });
  return [
    ...causes,
    // Decoding defaults an empty selector to the template's labels before validation upstream.
    ...validateSelectorAndTemplate(
      {
        ...spec,
        selector: {
          matchLabels: Object.keys(spec.selector ?? {}).length
            ? spec.selector
            : (spec.template?.metadata?.labels ?? {}),
        },
      },
      'ReplicationController',
    ),
  ];
}

function validateWorkload(o: Obj): Cause[] {
  const causes: Cause[] = [];
  const spec = (o.spec ?? {}) as Obj;
  if (spec.replicas !== undefined && (!Number.isInteger(spec.replicas) || spec.replicas < 0))
    causes.push({
      field: 'spec.replicas',
      message: `Invalid value: ${JSON.stringify(spec.replicas)}: must be greater than or equal to 0`,
    });
  causes.push(...validateSelectorAndTemplate(spec, 'deployment'));
  const strategy = spec.strategy as Obj | undefined;
  if (strategy?.type !== undefined && !['Recreate', 'RollingUpdate'].includes(strategy.type))
    causes.push({
      field: 'spec.strategy.type',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(strategy.type)}: supported values: "Recreate", "RollingUpdate"`,
    });
  if (strategy?.type === 'Recreate' && strategy.rollingUpdate)
    causes.push({
      field: 'spec.strategy.rollingUpdate',
      reason: 'FieldValueForbidden',
      message: "Forbidden: may not be specified when strategy `type` is 'Recreate'",
    });
  const ru = strategy?.rollingUpdate as Obj | undefined;
  if (ru && isZero(ru.maxUnavailable) && isZero(ru.maxSurge))
    causes.push({
      field: 'spec.strategy.rollingUpdate.maxUnavailable',
      message: `Invalid value: ${goIntOrString(ru.maxUnavailable)}: may not be 0 when \`maxSurge\` is 0`,
    });
  for (const f of ['revisionHistoryLimit', 'minReadySeconds', 'progressDeadlineSeconds'] as const) {
    if (spec[f] !== undefined && (!Number.isInteger(spec[f]) || spec[f] < 0))
      causes.push({
        field: `spec.${f}`,
        message: `Invalid value: ${JSON.stringify(spec[f])}: must be greater than or equal to 0`,
      });
  }
  return causes;
}

// Structural validation of a Pod from a manifest. Each problem names the
// field path the way the apiserver does (spec.containers[0].image). Static
// pods may not reference API objects (ConfigMaps, Secrets, ServiceAccounts).
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Probe } from 'kubernetes-types/core/v1.js';

import { checkDns1123Label, checkDns1123Subdomain } from '../../kube/names.js';
import { validatePodSpec } from '../../kube/pod-validation.js';
import { parseQuantity } from '../../kube/quantity.js';
import { checkUid, validateAnnotations, validateLabels, validatePodPaths } from '../../kube/validation.js';
import { type ProbeType, validateProbe } from '../probes/types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const SUPPORTED_VOLUMES = ['emptyDir', 'hostPath', 'downwardAPI'];
/** Volume types that read API objects: a static pod may not use them (it exists without the apiserver). */
const API_VOLUMES: Record<string, string> = {
  configMap: 'ConfigMaps',
  secret: 'Secrets',
  projected: 'ServiceAccount tokens, ConfigMaps and Secrets',
};
const STATIC = 'Forbidden: static pods cannot reference';

class Problems {
  readonly list: string[] = [];
  add(path: string, msg: string): void {
    this.list.push(`${path}: ${msg}`);
  }
  type(
    v: unknown,
    path: string,
    want: 'string' | 'number' | 'boolean' | 'object' | 'array',
    required = false,
  ): boolean {
    if (v === undefined || v === null) {
      if (required) this.add(path, 'Required value');
      return false;
    }
    const ok =
      want === 'array'
        ? Array.isArray(v)
        : want === 'object'
          ? isObj(v)
          : want === 'number'
            ? typeof v === 'number' && Number.isFinite(v)
            : typeof v === want;
    if (!ok) this.add(path, `Invalid type: expected ${want}, got ${Array.isArray(v) ? 'array' : typeof v}`);
    return ok;
  }
  strMap(v: unknown, path: string): void {
    if (!this.type(v, path, 'object')) return;
    for (const [k, val] of Object.entries(v as Obj))
      if (typeof val !== 'string') this.add(`${path}[${k}]`, `Invalid type: expected string, got ${typeof val}`);
  }
  stringList(v: unknown, path: string): void {
    if (!this.type(v, path, 'array')) return;
    (v as unknown[]).forEach((s, i) => this.type(s, `${path}[${i}]`, 'string', true));
  }
}

function validateContainer(c: unknown, path: string, p: Problems): void {
  if (!p.type(c, path, 'object', true)) return;
  const o = c as Obj;
  if (p.type(o.name, `${path}.name`, 'string', true)) {
    const bad = checkDns1123Label(o.name as string);
    if (bad) p.add(`${path}.name`, `Invalid value: "${o.name as string}": ${bad}`);
  }
  if (p.type(o.image, `${path}.image`, 'string', true) && (o.image as string).trim() === '')
    p.add(`${path}.image`, 'Required value');
  p.stringList(o.command, `${path}.command`);
  p.stringList(o.args, `${path}.args`);
  p.type(o.workingDir, `${path}.workingDir`, 'string');
  p.type(o.tty, `${path}.tty`, 'boolean');
  p.type(o.stdin, `${path}.stdin`, 'boolean');
  if (o.imagePullPolicy !== undefined && !['Always', 'IfNotPresent', 'Never'].includes(o.imagePullPolicy as string)) {
    p.add(
      `${path}.imagePullPolicy`,
      `Unsupported value: ${JSON.stringify(o.imagePullPolicy)}: supported values: "Always", "IfNotPresent", "Never"`,
    );
  }
  if (p.type(o.env, `${path}.env`, 'array')) {
    (o.env as unknown[]).forEach((e, i) => {
      if (!p.type(e, `${path}.env[${i}]`, 'object', true)) return;
      if (
        p.type((e as Obj).name, `${path}.env[${i}].name`, 'string', true) &&
        !/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test((e as Obj).name as string)
      ) {
        p.add(
          `${path}.env[${i}].name`,
          `Invalid value: ${JSON.stringify((e as Obj).name)}: a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')`,
        );
      }
      p.type((e as Obj).value, `${path}.env[${i}].value`, 'string');
      const vf = (e as Obj).valueFrom;
      if (!p.type(vf, `${path}.env[${i}].valueFrom`, 'object')) return;
      if ((vf as Obj).configMapKeyRef) p.add(`${path}.env[${i}].valueFrom.configMapKeyRef`, `${STATIC} ConfigMaps`);
      if ((vf as Obj).secretKeyRef) p.add(`${path}.env[${i}].valueFrom.secretKeyRef`, `${STATIC} Secrets`);
    });
  }
  if (p.type(o.envFrom, `${path}.envFrom`, 'array')) {
    (o.envFrom as unknown[]).forEach((e, i) => {
      if (isObj(e) && e.configMapRef) p.add(`${path}.envFrom[${i}].configMapRef`, `${STATIC} ConfigMaps`);
      if (isObj(e) && e.secretRef) p.add(`${path}.envFrom[${i}].secretRef`, `${STATIC} Secrets`);
    });
  }
  if (p.type(o.ports, `${path}.ports`, 'array')) {
    (o.ports as unknown[]).forEach((port, i) => {
      const pp = `${path}.ports[${i}]`;
      if (!p.type(port, pp, 'object', true)) return;
      const po = port as Obj;
      if (
        p.type(po.containerPort, `${pp}.containerPort`, 'number', true) &&
        !(
          Number.isInteger(po.containerPort) &&
          (po.containerPort as number) >= 1 &&
          (po.containerPort as number) <= 65535
        )
      ) {
        p.add(
          `${pp}.containerPort`,
          `Invalid value: ${String(po.containerPort)}: must be between 1 and 65535, inclusive`,
        );
      }
      if (
        p.type(po.hostPort, `${pp}.hostPort`, 'number') &&
        !(Number.isInteger(po.hostPort) && (po.hostPort as number) >= 0 && (po.hostPort as number) <= 65535)
      ) {
        p.add(`${pp}.hostPort`, `Invalid value: ${String(po.hostPort)}: must be between 0 and 65535, inclusive`);
      }
      if (po.protocol !== undefined && !['TCP', 'UDP', 'SCTP'].includes(po.protocol as string))
        p.add(
          `${pp}.protocol`,
          `Unsupported value: ${JSON.stringify(po.protocol)}: supported values: "SCTP", "TCP", "UDP"`,
        );
    });
  }
  if (p.type(o.resources, `${path}.resources`, 'object')) {
    for (const kind of ['requests', 'limits']) {
      const r = (o.resources as Obj)[kind];
      if (!p.type(r, `${path}.resources.${kind}`, 'object')) continue;
      for (const [k, v] of Object.entries(r as Obj)) {
        try {
          if (typeof v !== 'string' && typeof v !== 'number') throw new Error('must be a string or number');
          if (parseQuantity(v) < 0) throw new Error('must be greater than or equal to 0');
        } catch (e) {
          p.add(`${path}.resources.${kind}[${k}]`, `Invalid value: ${JSON.stringify(v)}: ${(e as Error).message}`);
        }
      }
    }
  }
  for (const [field, type] of [
    ['livenessProbe', 'Liveness'],
    ['readinessProbe', 'Readiness'],
    ['startupProbe', 'Startup'],
  ] as const) {
    if (p.type(o[field], `${path}.${field}`, 'object'))
      for (const e of validateProbe(o[field] as Probe, type as ProbeType, `${path}.${field}`)) p.list.push(e);
  }
  if (p.type(o.securityContext, `${path}.securityContext`, 'object')) {
    const sc = o.securityContext as Obj;
    for (const f of ['runAsUser', 'runAsGroup']) {
      if (
        p.type(sc[f], `${path}.securityContext.${f}`, 'number') &&
        !(Number.isInteger(sc[f]) && (sc[f] as number) >= 0)
      )
        p.add(
          `${path}.securityContext.${f}`,
          `Invalid value: ${String(sc[f])}: must be between 0 and 2147483647, inclusive`,
        );
    }
    p.type(sc.runAsNonRoot, `${path}.securityContext.runAsNonRoot`, 'boolean');
    p.type(sc.privileged, `${path}.securityContext.privileged`, 'boolean');
    p.type(sc.readOnlyRootFilesystem, `${path}.securityContext.readOnlyRootFilesystem`, 'boolean');
  }
  if (p.type(o.volumeMounts, `${path}.volumeMounts`, 'array')) {
    (o.volumeMounts as unknown[]).forEach((m, i) => {
      if (!p.type(m, `${path}.volumeMounts[${i}]`, 'object', true)) return;
      p.type((m as Obj).name, `${path}.volumeMounts[${i}].name`, 'string', true);
      p.type((m as Obj).mountPath, `${path}.volumeMounts[${i}].mountPath`, 'string', true);
    });
  }
}

/** Returns the list of problems; empty means the pod can be run. */
export function validatePod(obj: unknown): string[] {
  const p = new Problems();
  if (!isObj(obj)) return ['Invalid type: expected a Pod object'];
  if (!p.type(obj.metadata, 'metadata', 'object', true)) return p.list;
  const md = obj.metadata as Obj;
  if (p.type(md.name, 'metadata.name', 'string', true)) {
    const bad = checkDns1123Subdomain(md.name as string);
    if (bad) p.add('metadata.name', `Invalid value: "${md.name as string}": ${bad}`);
  }
  if (p.type(md.namespace, 'metadata.namespace', 'string')) {
    const bad = checkDns1123Label(md.namespace as string);
    if (bad) p.add('metadata.namespace', `Invalid value: "${md.namespace as string}": ${bad}`);
  }
  // The uid names the pod's directories: anything but one safe path element is refused.
  if (md.uid !== undefined && md.uid !== '') {
    if (typeof md.uid !== 'string') p.add('metadata.uid', `Invalid type: expected string, got ${typeof md.uid}`);
    else {
      const bad = checkUid(md.uid);
      if (bad) p.add('metadata.uid', `Invalid value: ${JSON.stringify(md.uid)}: ${bad}`);
    }
  }
  for (const e of [
    ...validateLabels(md.labels, 'metadata.labels'),
    ...validateAnnotations(md.annotations, 'metadata.annotations'),
  ])
    p.add(e.field, e.message);
  if (!p.type(obj.spec, 'spec', 'object', true)) return p.list;
  const spec = obj.spec as Obj;
  const seen = new Set<string>();
  for (const field of ['initContainers', 'containers'] as const) {
    const list = spec[field];
    if (!p.type(list, `spec.${field}`, 'array', field === 'containers')) continue;
    if (field === 'containers' && (list as unknown[]).length === 0) p.add('spec.containers', 'Required value');
    (list as unknown[]).forEach((c, i) => {
      validateContainer(c, `spec.${field}[${i}]`, p);
      const name = isObj(c) ? c.name : undefined;
      if (typeof name === 'string') {
        if (seen.has(name)) p.add(`spec.${field}[${i}].name`, `Duplicate value: "${name}"`);
        seen.add(name);
      }
    });
  }
  for (const e of validatePodPaths(spec, 'spec')) p.add(e.field, e.message);
  if (spec.restartPolicy !== undefined && !['Always', 'OnFailure', 'Never'].includes(spec.restartPolicy as string)) {
    p.add(
      'spec.restartPolicy',
      `Unsupported value: ${JSON.stringify(spec.restartPolicy)}: supported values: "Always", "OnFailure", "Never"`,
    );
  }
  if (
    p.type(spec.terminationGracePeriodSeconds, 'spec.terminationGracePeriodSeconds', 'number') &&
    (spec.terminationGracePeriodSeconds as number) < 0
  ) {
    p.add('spec.terminationGracePeriodSeconds', 'must be greater than or equal to 0');
  }
  if (p.type(spec.serviceAccountName, 'spec.serviceAccountName', 'string') && spec.serviceAccountName)
    p.add('spec.serviceAccountName', `${STATIC} ServiceAccounts`);
  if (p.type(spec.serviceAccount, 'spec.serviceAccount', 'string') && spec.serviceAccount)
    p.add('spec.serviceAccount', `${STATIC} ServiceAccounts`);
  p.type(spec.hostNetwork, 'spec.hostNetwork', 'boolean');
  if (p.type(spec.tolerations, 'spec.tolerations', 'array'))
    (spec.tolerations as unknown[]).forEach((t, i) => p.type(t, `spec.tolerations[${i}]`, 'object', true));
  if (
    p.type(spec.activeDeadlineSeconds, 'spec.activeDeadlineSeconds', 'number') &&
    !((spec.activeDeadlineSeconds as number) > 0 && Number.isInteger(spec.activeDeadlineSeconds))
  ) {
    p.add(
      'spec.activeDeadlineSeconds',
      `Invalid value: ${String(spec.activeDeadlineSeconds)}: must be between 1 and 2147483647, inclusive`,
    );
  }
  const hostPorts = new Set<string>();
  for (const field of ['initContainers', 'containers']) {
    const list = spec[field];
    if (!Array.isArray(list)) continue;
    list.forEach((c: unknown, i) => {
      if (!isObj(c) || !Array.isArray(c.ports)) return;
      c.ports.forEach((port: unknown, j: number) => {
        if (!isObj(port) || !port.hostPort) return;
        const key = `${String(port.protocol ?? 'TCP')}/${String(port.hostIP ?? '')}/${String(port.hostPort)}`;
        if (hostPorts.has(key))
          p.add(
            `spec.${field}[${i}].ports[${j}].hostPort`,
            `Duplicate value: "${String(port.hostPort)}/${String(port.protocol ?? 'TCP')}"`,
          );
        hostPorts.add(key);
      });
    });
  }
  p.type(spec.hostname, 'spec.hostname', 'string');
  p.strMap(spec.nodeSelector, 'spec.nodeSelector');
  if (p.type(spec.volumes, 'spec.volumes', 'array')) {
    const vnames = new Set<string>();
    (spec.volumes as unknown[]).forEach((v, i) => {
      const vp = `spec.volumes[${i}]`;
      if (!p.type(v, vp, 'object', true)) return;
      const vo = v as Obj;
      if (p.type(vo.name, `${vp}.name`, 'string', true)) {
        const bad = checkDns1123Label(vo.name as string);
        if (bad) p.add(`${vp}.name`, `Invalid value: ${JSON.stringify(vo.name)}: ${bad}`);
        if (vnames.has(vo.name as string)) p.add(`${vp}.name`, `Duplicate value: "${vo.name as string}"`);
        vnames.add(vo.name as string);
      }
      const kinds = Object.keys(vo).filter((k) => k !== 'name');
      if (kinds.length !== 1) p.add(vp, 'must specify exactly one volume type');
      else if (API_VOLUMES[kinds[0]!]) p.add(`${vp}.${kinds[0]!}`, `${STATIC} ${API_VOLUMES[kinds[0]!]!}`);
      else if (!SUPPORTED_VOLUMES.includes(kinds[0]!))
        p.add(
          `${vp}.${kinds[0]!}`,
          `volume type not supported by this kubelet yet (supported: ${SUPPORTED_VOLUMES.join(', ')})`,
        );
      else if (kinds[0] === 'hostPath') {
        if (
          p.type(vo.hostPath, `${vp}.hostPath`, 'object', true) &&
          p.type((vo.hostPath as Obj).path, `${vp}.hostPath.path`, 'string', true) &&
          !((vo.hostPath as Obj).path as string).startsWith('/')
        ) {
          // A relative path would be taken from the kubelet's working directory.
          p.add(
            `${vp}.hostPath.path`,
            `Invalid value: ${JSON.stringify((vo.hostPath as Obj).path)}: must be an absolute path`,
          );
        }
      }
    });
    for (const field of ['initContainers', 'containers']) {
      const list = spec[field];
      if (!Array.isArray(list)) continue;
      list.forEach((c: unknown, i) => {
        if (!isObj(c) || !Array.isArray(c.volumeMounts)) return;
        c.volumeMounts.forEach((m: unknown, j: number) => {
          if (isObj(m) && typeof m.name === 'string' && !vnames.has(m.name))
            p.add(`spec.${field}[${i}].volumeMounts[${j}].name`, `Not found: "${m.name}"`);
        });
      });
    }
  }
  // Then the rules the apiserver applies to every pod (one ValidatePod for both, as upstream): a static pod the
  // apiserver would refuse as a mirror pod is refused here, with the same words.
  if (p.list.length === 0) for (const e of validatePodSpec(spec, 'spec')) p.add(e.field, e.message);
  return p.list;
}

export type { Pod };

// A container's environment as upstream's makeEnvironmentVariables builds it:
// the Service variables (KUBERNETES_SERVICE_HOST, <NAME>_SERVICE_HOST, docker
// link style <NAME>_PORT_…), then envFrom and env in order, with
// configMapKeyRef/secretKeyRef/fieldRef/resourceFieldRef and $(VAR) expansion.
// A missing reference fails the container with CreateContainerConfigError.
import type { Container, EnvVar, Pod } from 'kubernetes-types/core/v1.js';

import type { KObj } from '../../kube/client.js';
import type { ApiObjects } from '../volumes/api-objects.js';
import { type DownwardContext, fieldValue, resourceValue } from './downward-api.js';

export class EnvError extends Error {}

const envName = (s: string): string => s.toUpperCase().replace(/-/g, '_');

/** The variables of one Service (upstream envvars.FromServices). */
function serviceVars(svc: KObj): [string, string][] {
  const ip = svc.spec?.clusterIP;
  if (!ip || ip === 'None') return [];
  const name = envName(svc.metadata.name);
  const ports = (svc.spec?.ports ?? []) as KObj[];
  if (!ports.length) return [];
  const out: [string, string][] = [
    [`${name}_SERVICE_HOST`, ip],
    [`${name}_SERVICE_PORT`, String(ports[0]!.port)],
  ];
  for (const p of ports) if (p.name) out.push([`${name}_SERVICE_PORT_${envName(p.name)}`, String(p.port)]);
  const proto = (p: KObj): string => String(p.protocol ?? 'TCP').toLowerCase();
  out.push([`${name}_PORT`, `${proto(ports[0]!)}://${ip}:${String(ports[0]!.port)}`]);
  for (const p of ports) {
    const prefix = `${name}_PORT_${String(p.port)}_${proto(p).toUpperCase()}`;
    out.push(
      [prefix, `${proto(p)}://${ip}:${String(p.port)}`],
      [`${prefix}_PROTO`, proto(p)],
      [`${prefix}_PORT`, String(p.port)],
      [`${prefix}_ADDR`, ip],
    );
  }
  return out;
}

/** Services visible to a pod: its namespace's when enableServiceLinks (default true), and always default/kubernetes. */
export function serviceEnv(pod: Pod, services: KObj[]): Map<string, string> {
  const ns = pod.metadata!.namespace!;
  const links = pod.spec?.enableServiceLinks ?? true;
  const out = new Map<string, string>();
  const chosen = services.filter(
    (s) =>
      (links && s.metadata.namespace === ns) ||
      (s.metadata.namespace === 'default' && s.metadata.name === 'kubernetes'),
  );
  // The kubernetes Service of default comes last so that a same-named one in the pod's namespace cannot shadow it.
  chosen.sort(
    (a, b) =>
      Number(a.metadata.name === 'kubernetes' && a.metadata.namespace === 'default') -
      Number(b.metadata.name === 'kubernetes' && b.metadata.namespace === 'default'),
  );
  for (const s of chosen) for (const [k, v] of serviceVars(s)) out.set(k, v);
  return out;
}

/** $(VAR) from `vars`; $$ escapes; unknown references stay as written (expansion.Expand). */
export function expand(s: string, vars: Map<string, string>): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '$' || i === s.length - 1) {
      out += c;
      continue;
    }
    const n = s[i + 1]!;
    if (n === '$') {
      out += '$';
      i++;
    } else if (n === '(') {
      const end = s.indexOf(')', i + 2);
      if (end < 0) {
        out += s.slice(i);
        break;
      }
      const name = s.slice(i + 2, end);
      out += vars.has(name) ? vars.get(name)! : `$(${name})`;
      i = end;
    } else out += c;
  }
  return out;
}

/** One key of a ConfigMap (text or binaryData) or a Secret, with upstream's errors unless optional. */
async function keyValue(
  kind: 'ConfigMap' | 'Secret',
  ns: string,
  r: { name?: string; key: string; optional?: boolean },
  objects: ApiObjects,
): Promise<string | undefined> {
  const name = r.name ?? '';
  const o = kind === 'ConfigMap' ? await objects.configMap(ns, name) : await objects.secret(ns, name);
  const b64 = (v: string | undefined): string | undefined =>
    v === undefined ? undefined : Buffer.from(v, 'base64').toString();
  const v = !o
    ? undefined
    : kind === 'ConfigMap'
      ? (o.data?.[r.key] ?? b64(o.binaryData?.[r.key]))
      : b64(o.data?.[r.key]);
  if (v !== undefined || r.optional) return v;
  throw new EnvError(
    o ? `couldn't find key ${r.key} in ${kind} ${ns}/${name}` : `${kind.toLowerCase()} "${name}" not found`,
  );
}

async function refValue(
  pod: Pod,
  c: Container,
  e: EnvVar,
  objects: ApiObjects,
  ctx: DownwardContext,
): Promise<string | undefined> {
  const ns = pod.metadata!.namespace!;
  const vf = e.valueFrom!;
  if (vf.fieldRef) return fieldValue(pod, vf.fieldRef.fieldPath, ctx);
  if (vf.resourceFieldRef)
    return resourceValue(
      pod,
      vf.resourceFieldRef.containerName || c.name,
      vf.resourceFieldRef.resource,
      vf.resourceFieldRef.divisor,
      ctx,
    );
  if (vf.configMapKeyRef) return keyValue('ConfigMap', ns, vf.configMapKeyRef, objects);
  if (vf.secretKeyRef) return keyValue('Secret', ns, vf.secretKeyRef, objects);
  return undefined;
}

export async function containerEnv(
  pod: Pod,
  c: Container,
  objects: ApiObjects,
  ctx: DownwardContext,
  services: KObj[],
): Promise<Map<string, string>> {
  const ns = pod.metadata!.namespace!;
  const svc = serviceEnv(pod, services);
  const env = new Map<string, string>();
  for (const from of c.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const isCm = !!from.configMapRef;
    const o = isCm ? await objects.configMap(ns, ref?.name ?? '') : await objects.secret(ns, ref?.name ?? '');
    if (!o) {
      if (ref?.optional) continue;
      throw new EnvError(`${isCm ? 'configmap' : 'secret'} "${ref?.name ?? ''}" not found`);
    }
    for (const [k, v] of Object.entries((o.data ?? {}) as Record<string, string>))
      env.set(`${from.prefix ?? ''}${k}`, isCm ? v : Buffer.from(v, 'base64').toString());
  }
  // Each value may use the service variables and those defined before it.
  const scope = (): Map<string, string> => new Map([...svc, ...env]);
  for (const e of c.env ?? []) {
    if (e.valueFrom) {
      const v = await refValue(pod, c, e, objects, ctx);
      if (v !== undefined) env.set(e.name, v);
    } else env.set(e.name, expand(e.value ?? '', scope()));
  }
  // Service variables fill in what the container does not set itself.
  for (const [k, v] of svc) if (!env.has(k)) env.set(k, v);
  return env;
}

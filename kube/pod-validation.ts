// ValidatePodSpec as upstream words it (pkg/apis/core/validation), for the
// dev apiserver and, in time, the kubelet's static pods: containers (names,
// images, ports, env, volume mounts, resources, policies), volumes and the
// pod-level policies. Each problem is a field path and upstream's message.
import net from 'node:net';

import { checkDns1123Label, checkDns1123Subdomain } from './names.js';
import { type FieldError, validatePodPaths } from './validation.js';

type O = Record<string, any>;
const list = (v: unknown): O[] => (Array.isArray(v) ? (v as O[]) : []);
const supported = (field: string, v: unknown, values: string[]): FieldError[] =>
  v === undefined || values.includes(v as string)
    ? []
    : [
        {
          field,
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: ${JSON.stringify(v)}: supported values: ${values.map((x) => JSON.stringify(x)).join(', ')}`,
        },
      ];
const required = (field: string): FieldError => ({ field, reason: 'FieldValueRequired', message: 'Required value' });

export const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** A port number field: 1–65535 (0 too where `zeroOk`, as hostPort). */
export function validatePortNumber(v: unknown, field: string, zeroOk = false): FieldError[] {
  if (v === undefined && zeroOk) return [];
  if (!Number.isInteger(v) || (v as number) > 65535 || (v as number) < (zeroOk ? 0 : 1))
    return [
      {
        field,
        message: `Invalid value: ${JSON.stringify(v ?? 0)}: must be between ${zeroOk ? 0 : 1} and 65535, inclusive`,
      },
    ];
  return [];
}

/** IsValidPortName (IANA_SVC_NAME). */
export function portNameErrors(name: string): string[] {
  const out: string[] = [];
  if (name.length > 15) out.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) out.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (name.includes('--')) out.push('must not contain consecutive hyphens');
  if (!/[a-z]/.test(name)) out.push('must contain at least one letter (a-z)');
  if (name.startsWith('-') || name.endsWith('-')) out.push('must not begin or end with a hyphen');
  return out;
}

/** A port that is a number or an IANA name (Service targetPort, probes). */
export function validateIntOrPortName(v: unknown, field: string): FieldError[] {
  if (typeof v === 'number') return validatePortNumber(v, field);
  if (typeof v === 'string')
    return portNameErrors(v).map((m) => ({ field, message: `Invalid value: ${JSON.stringify(v)}: ${m}` }));
  return [];
}

// 1.32 has RelaxedEnvironmentVariableValidation on: any printable ASCII but '='.
const ENV_NAME = /^[\x20-\x3c\x3e-\x7e]+$/;

/** Quantities as cores or bytes, for comparing requests with limits. */
export function parseQuantity(q: unknown): number | undefined {
  const m = /^([+-]?[0-9.]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|e[0-9]+)?$/.exec(String(q ?? ''));
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] ?? '';
  const mult: Record<string, number> = {
    '': 1,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    P: 1e15,
    E: 1e18,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    Pi: 2 ** 50,
    Ei: 2 ** 60,
  };
  if (unit.startsWith('e')) return n * 10 ** Number(unit.slice(1));
  return Number.isFinite(n) ? n * mult[unit]! : undefined;
}

/** validateResizePolicy: cpu and memory once each, NotRequired or RestartContainer (only NotRequired in a Never pod). */
function validateResizePolicy(policies: unknown, p: string, podRestartPolicy: unknown): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  list(policies).forEach((x, i) => {
    if (seen.has(x.resourceName))
      out.push({
        field: `${p}[${i}]`,
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${JSON.stringify(x.resourceName)}`,
      });
    seen.add(x.resourceName);
    if (!x.resourceName) out.push(required(p));
    else out.push(...supported(p, x.resourceName, ['cpu', 'memory']));
    if (!x.restartPolicy) out.push(required(p));
    else out.push(...supported(p, x.restartPolicy, ['NotRequired', 'RestartContainer']));
    if (podRestartPolicy === 'Never' && x.restartPolicy !== 'NotRequired')
      out.push({
        field: p,
        message: `Invalid value: ${JSON.stringify(x.restartPolicy ?? '')}: must be 'NotRequired' when \`restartPolicy\` is 'Never'`,
      });
  });
  return out;
}

function validateContainer(
  c: O,
  p: string,
  volumes: Set<string>,
  seen: Set<string>,
  podRestartPolicy: unknown,
): FieldError[] {
  const out: FieldError[] = [];
  if (typeof c?.name !== 'string' || c.name === '') out.push(required(`${p}.name`));
  else {
    const bad = checkDns1123Label(c.name);
    if (bad) out.push({ field: `${p}.name`, message: `Invalid value: "${c.name}": ${bad}` });
    if (seen.has(c.name))
      out.push({ field: `${p}.name`, reason: 'FieldValueDuplicate', message: `Duplicate value: "${c.name}"` });
    seen.add(c.name);
  }
  if (typeof c?.image !== 'string' || c.image.trim() === '') out.push(required(`${p}.image`));
  const portNames = new Set<string>();
  list(c?.ports).forEach((port, i) => {
    const pp = `${p}.ports[${i}]`;
    out.push(
      ...validatePortNumber(port.containerPort, `${pp}.containerPort`),
      ...validatePortNumber(port.hostPort, `${pp}.hostPort`, true),
    );
    out.push(...supported(`${pp}.protocol`, port.protocol, PROTOCOLS));
    if (typeof port.name === 'string' && port.name) {
      for (const m of portNameErrors(port.name))
        out.push({ field: `${pp}.name`, message: `Invalid value: ${JSON.stringify(port.name)}: ${m}` });
      if (portNames.has(port.name))
        out.push({
          field: `${pp}.name`,
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: ${JSON.stringify(port.name)}`,
        });
      portNames.add(port.name);
    }
  });
  list(c?.env).forEach((e, i) => {
    const ep = `${p}.env[${i}].name`;
    if (typeof e.name !== 'string' || e.name === '') out.push(required(ep));
    else if (!ENV_NAME.test(e.name))
      out.push({
        field: ep,
        message: `Invalid value: ${JSON.stringify(e.name)}: a valid environment variable name must consist only of printable ASCII characters other than '='`,
      });
  });
  list(c?.volumeMounts).forEach((m, i) => {
    const mp = `${p}.volumeMounts[${i}]`;
    if (typeof m.name !== 'string' || m.name === '') out.push(required(`${mp}.name`));
    else if (!volumes.has(m.name))
      out.push({ field: `${mp}.name`, reason: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(m.name)}` });
    if (typeof m.mountPath !== 'string' || m.mountPath === '') out.push(required(`${mp}.mountPath`));
  });
  out.push(...supported(`${p}.imagePullPolicy`, c?.imagePullPolicy, ['Always', 'IfNotPresent', 'Never']));
  out.push(
    ...supported(`${p}.terminationMessagePolicy`, c?.terminationMessagePolicy, ['File', 'FallbackToLogsOnError']),
  );
  const limits = (c?.resources?.limits ?? {}) as O;
  const requests = (c?.resources?.requests ?? {}) as O;
  for (const [res, req] of Object.entries(requests)) {
    const r = parseQuantity(req);
    const l = parseQuantity(limits[res]);
    if (r !== undefined && l !== undefined && r > l)
      out.push({
        field: `${p}.resources.requests`,
        message: `Invalid value: ${JSON.stringify(String(req))}: must be less than or equal to ${res} limit of ${String(limits[res])}`,
      });
  }
  out.push(...validateResizePolicy(c?.resizePolicy, `${p}.resizePolicy`, podRestartPolicy));
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const pr = c?.[probe] as O | undefined;
    if (!pr) continue;
    const handlers = ['exec', 'httpGet', 'tcpSocket', 'grpc'].filter((h) => pr[h] !== undefined);
    if (handlers.length === 0)
      out.push({
        field: `${p}.${probe}`,
        reason: 'FieldValueRequired',
        message: 'Required value: must specify a handler type',
      });
    else if (handlers.length > 1)
      out.push({
        field: `${p}.${probe}.${handlers[1]}`,
        reason: 'FieldValueForbidden',
        message: `Forbidden: may not specify more than 1 handler type`,
      });
    if (pr.httpGet?.port !== undefined)
      out.push(...validateIntOrPortName(pr.httpGet.port, `${p}.${probe}.httpGet.port`));
    if (pr.tcpSocket?.port !== undefined)
      out.push(...validateIntOrPortName(pr.tcpSocket.port, `${p}.${probe}.tcpSocket.port`));
  }
  return out;
}

/** Go's %#v of a []string, as field.Invalid prints list values. */
const goStrings = (v: unknown[]): string => `[]string{${v.map((x) => JSON.stringify(String(x))).join(', ')}}`;

/** validatePodDNSConfig: None needs nameservers; at most 3 nameservers (IPs), 32 search domains (2048 characters), named options. */
export function validateDnsConfig(spec: O, path: string): FieldError[] {
  const cfg = spec.dnsConfig as O | undefined;
  const p = `${path}.dnsConfig`;
  if (spec.dnsPolicy === 'None') {
    if (!cfg)
      return [
        {
          field: p,
          reason: 'FieldValueRequired',
          message: 'Required value: must provide `dnsConfig` when `dnsPolicy` is None',
        },
      ];
    if (!Array.isArray(cfg.nameservers) || cfg.nameservers.length === 0)
      return [
        {
          field: `${p}.nameservers`,
          reason: 'FieldValueRequired',
          message: 'Required value: must provide at least one DNS nameserver when `dnsPolicy` is None',
        },
      ];
  }
  if (!cfg || typeof cfg !== 'object') return [];
  const out: FieldError[] = [];
  const ns = Array.isArray(cfg.nameservers) ? (cfg.nameservers as unknown[]) : [];
  if (ns.length > 3)
    out.push({
      field: `${p}.nameservers`,
      message: `Invalid value: ${goStrings(ns)}: must not have more than 3 nameservers`,
    });
  ns.forEach((n, i) => {
    if (typeof n !== 'string' || !net.isIP(n))
      out.push({
        field: `${p}.nameservers[${i}]`,
        message: `Invalid value: ${JSON.stringify(n)}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
      });
  });
  const searches = Array.isArray(cfg.searches) ? (cfg.searches as unknown[]) : [];
  if (searches.length > 32)
    out.push({
      field: `${p}.searches`,
      message: `Invalid value: ${goStrings(searches)}: must not have more than 32 search paths`,
    });
  if (searches.join(' ').length > 2048)
    out.push({
      field: `${p}.searches`,
      message: `Invalid value: ${goStrings(searches)}: must not have more than 2048 characters (including spaces) in the search list`,
    });
  searches.forEach((s, i) => {
    // A trailing dot is fine.
    const v = String(s).replace(/\.$/, '');
    const bad = checkDns1123Subdomain(v);
    if (bad) out.push({ field: `${p}.searches[${i}]`, message: `Invalid value: ${JSON.stringify(v)}: ${bad}` });
  });
  list(cfg.options).forEach((o, i) => {
    if (typeof o?.name !== 'string' || o.name === '')
      out.push({
        field: `${p}.options[${i}]`,
        reason: 'FieldValueRequired',
        message: 'Required value: must not be empty',
      });
  });
  return out;
}

const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
/** The regex as upstream's message prints it. */
const SYSCTL_NAME_TEXT = '^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\.\\/])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';

/** validateSysctls: names as the kernel spells them, each once. */
export function validateSysctls(spec: O, path: string): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  list(spec.securityContext?.sysctls).forEach((s, i) => {
    const p = `${path}.securityContext.sysctls[${i}].name`;
    if (typeof s?.name !== 'string' || s.name === '') return out.push(required(p));
    if (s.name.length > 253 || !SYSCTL_NAME.test(s.name))
      out.push({
        field: p,
        message: `Invalid value: ${JSON.stringify(s.name)}: must have at most 253 characters and match regex ${SYSCTL_NAME_TEXT}`,
      });
    else if (seen.has(s.name))
      out.push({ field: p, reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(s.name)}` });
    seen.add(s.name);
    if (typeof s.value !== 'string')
      out.push({
        field: `${path}.securityContext.sysctls[${i}].value`,
        message: `Invalid value: ${JSON.stringify(s.value ?? null)}: must be a string`,
      });
  });
  return out;
}

/** ValidatePodSpec (the parts the dev apiserver and kubelet act on). */
/** A container restart rule (v1.34+; kubernetes-types stops at v1.30). */
interface RestartRule {
  action?: string;
  exitCodes?: { operator?: string; values?: number[] } | null;
}

/** Upstream validateContainerRestartPolicy: a policy rules need, supported values, actions and operators, limits. */
function validateContainerRestartPolicy(c: O, p: string): FieldError[] {
  const out: FieldError[] = [];
  const rules = list(c.restartPolicyRules) as RestartRule[];
  if (c.restartPolicy === undefined) {
    if (rules.length)
      out.push({
        field: `${p}.restartPolicy`,
        reason: 'FieldValueRequired',
        message: 'Required value: must specify restartPolicy when restart rules are used',
      });
  } else out.push(...supported(`${p}.restartPolicy`, c.restartPolicy, ['Always', 'Never', 'OnFailure']));
  if (rules.length > 20)
    out.push({
      field: `${p}.restartPolicyRules`,
      reason: 'FieldValueTooMany',
      message: `Too many: ${rules.length}: must have at most 20 items`,
    });
  rules.forEach((rule, k) => {
    const rp = `${p}.restartPolicyRules[${k}]`;
    out.push(...supported(`${rp}.action`, rule.action ?? '', ['Restart', 'RestartAllContainers']));
    if (!rule.exitCodes) {
      out.push({
        field: `${rp}.exitCodes`,
        reason: 'FieldValueRequired',
        message: 'Required value: must be specified',
      });
      return;
    }
    out.push(...supported(`${rp}.exitCodes.operator`, rule.exitCodes.operator ?? '', ['In', 'NotIn']));
    const n = rule.exitCodes.values?.length ?? 0;
    if (n > 255)
      out.push({
        field: `${rp}.exitCodes.values`,
        reason: 'FieldValueTooMany',
        message: `Too many: ${n}: must have at most 255 items`,
      });
  });
  return out;
}

const POD_CERT_KEY_TYPES = ['RSA3072', 'RSA4096', 'ECDSAP256', 'ECDSAP384', 'ECDSAP521', 'ED25519'];

/** podCertificate projections: a supported key type; maxExpirationSeconds from an hour to 91 days (a day for kubernetes.io signers). */
function validatePodCertificateSources(spec: O, path: string): FieldError[] {
  const out: FieldError[] = [];
  list(spec.volumes).forEach((v, i) =>
    list(v.projected?.sources).forEach((src, j) => {
      const pc = src.podCertificate as O | undefined;
      if (!pc) return;
      const at = `${path}.volumes[${i}].projected.sources[${j}].podCertificate`;
      out.push(...supported(`${at}.keyType`, pc.keyType ?? '', POD_CERT_KEY_TYPES));
      const max = pc.maxExpirationSeconds as number | undefined;
      if (max === undefined || max === null) return;
      const limit = String(pc.signerName ?? '').startsWith('kubernetes.io/') ? 86400 : 91 * 86400;
      if (max < 3600)
        out.push({
          field: `${at}.maxExpirationSeconds`,
          message: `Invalid value: ${max}: if provided, maxExpirationSeconds must be >= 3600`,
        });
      if (max > limit)
        out.push({
          field: `${at}.maxExpirationSeconds`,
          message: `Invalid value: ${max}: if provided, maxExpirationSeconds must be <= ${limit}`,
        });
    }),
  );
  return out;
}

/** validatePodHostName: hostnameOverride is a DNS subdomain of at most 64 characters, alone (no FQDN, no host network). */
function validateHostnameOverride(spec: O, path: string): FieldError[] {
  const h = spec.hostnameOverride;
  if (h === undefined || h === null) return [];
  const field = `${path}.hostnameOverride`;
  const out: FieldError[] = [];
  const forbidden = (why: string): FieldError => ({
    field,
    reason: 'FieldValueForbidden',
    message: `Forbidden: ${why}`,
  });
  if (spec.setHostnameAsFQDN === true) out.push(forbidden('may not be specified when setHostnameAsFQDN is true'));
  if (spec.hostNetwork === true) out.push(forbidden('may not be specified when hostNetwork is true'));
  const name = String(h);
  if (name.length > 64)
    out.push({ field, reason: 'FieldValueTooLong', message: 'Too long: may not be more than 64 bytes' });
  const bad = checkDns1123Subdomain(name);
  if (bad) out.push({ field, message: `Invalid value: ${JSON.stringify(name)}: ${bad}` });
  return out;
}

export function validatePodSpec(spec: O | undefined, path: string): FieldError[] {
  if (!spec || typeof spec !== 'object') return [required(path)];
  const out: FieldError[] = [];
  const volumes = new Set<string>();
  list(spec.volumes).forEach((v, i) => {
    const vp = `${path}.volumes[${i}].name`;
    if (typeof v.name !== 'string' || v.name === '') out.push(required(vp));
    else {
      const bad = checkDns1123Label(v.name);
      if (bad) out.push({ field: vp, message: `Invalid value: ${JSON.stringify(v.name)}: ${bad}` });
      if (volumes.has(v.name))
        out.push({ field: vp, reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(v.name)}` });
      volumes.add(v.name);
    }
  });
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) out.push(required(`${path}.containers`));
  const seen = new Set<string>();
  for (const l of ['initContainers', 'containers'])
    list(spec[l]).forEach((c, i) =>
      out.push(...validateContainer(c, `${path}.${l}[${i}]`, volumes, seen, spec.restartPolicy)),
    );
  // Container restartPolicy and restartPolicyRules (ContainerRestartRules, v1.35+): any container may set them; an init
  // container without restartPolicy Always runs once, so probes and hooks are not its.
  list(spec.containers).forEach((c, i) => out.push(...validateContainerRestartPolicy(c, `${path}.containers[${i}]`)));
  list(spec.initContainers).forEach((c, i) => {
    const p = `${path}.initContainers[${i}]`;
    out.push(...validateContainerRestartPolicy(c, p));
    if (c.restartPolicy === 'Always') return;
    for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
      if (c[f] !== undefined && c[f] !== null)
        out.push({
          field: `${p}.${f}`,
          reason: 'FieldValueForbidden',
          message: 'Forbidden: may not be set for init containers without restartPolicy=Always',
        });
    }
  });
  out.push(...validatePodPaths(spec, path));
  out.push(...validateHostnameOverride(spec, path));
  out.push(...validatePodCertificateSources(spec, path));
  out.push(...supported(`${path}.restartPolicy`, spec.restartPolicy, ['Always', 'OnFailure', 'Never']));
  out.push(
    ...supported(`${path}.dnsPolicy`, spec.dnsPolicy, ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None']),
  );
  out.push(...validateDnsConfig(spec, path));
  out.push(...validateSysctls(spec, path));
  if (
    spec.terminationGracePeriodSeconds !== undefined &&
    (!Number.isInteger(spec.terminationGracePeriodSeconds) || spec.terminationGracePeriodSeconds < 0)
  )
    out.push({
      field: `${path}.terminationGracePeriodSeconds`,
      message: `Invalid value: ${JSON.stringify(spec.terminationGracePeriodSeconds)}: must be greater than or equal to 0`,
    });
  if (
    spec.activeDeadlineSeconds !== undefined &&
    (!Number.isInteger(spec.activeDeadlineSeconds) || spec.activeDeadlineSeconds < 1)
  )
    out.push({
      field: `${path}.activeDeadlineSeconds`,
      message: `Invalid value: ${JSON.stringify(spec.activeDeadlineSeconds)}: must be between 1 and 2147483647, inclusive`,
    });
  return out;
}

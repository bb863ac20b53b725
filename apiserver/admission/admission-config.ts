// --admission-control-config-file: an AdmissionConfiguration (apiserver.config.k8s.io)
// whose plugins' configurations are inline or in files beside it. Only PodSecurity
// takes one here (pod-security.admission.config.k8s.io PodSecurityConfiguration).
import fs from 'node:fs';
import path from 'node:path';

import { parse } from 'yaml';

import { checkDns1123Label, checkDns1123Subdomain } from '../../kube/names.js';
import { DEFAULT_POD_SECURITY, type PodSecurityConfiguration } from './pod-security/admission.js';
import { type LevelVersion, parseLevel, parseVersion } from './pod-security/policy.js';

const ADMISSION_CONFIG_VERSIONS = [
  'apiserver.config.k8s.io/v1',
  'apiserver.config.k8s.io/v1alpha1',
  'apiserver.k8s.io/v1alpha1',
];
const POD_SECURITY_VERSIONS = [
  'pod-security.admission.config.k8s.io/v1',
  'pod-security.admission.config.k8s.io/v1beta1',
  'pod-security.admission.config.k8s.io/v1alpha1',
];

export interface AdmissionConfig {
  podSecurity: PodSecurityConfiguration;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function readYaml(file: string): unknown {
  try {
    return parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`, { cause: e });
  }
}

/** Reads the file; every problem names the file and the field. */
export function loadAdmissionConfig(file: string): AdmissionConfig {
  const doc = readYaml(file);
  if (
    !isRecord(doc) ||
    doc.kind !== 'AdmissionConfiguration' ||
    !ADMISSION_CONFIG_VERSIONS.includes(String(doc.apiVersion))
  ) {
    throw new Error(`${file}: not an AdmissionConfiguration (apiVersion ${ADMISSION_CONFIG_VERSIONS[0]})`);
  }
  const plugins = doc.plugins ?? [];
  if (!Array.isArray(plugins)) throw new Error(`${file}: plugins: must be a list`);
  let podSecurity = DEFAULT_POD_SECURITY;
  plugins.forEach((p: unknown, i) => {
    if (!isRecord(p) || typeof p.name !== 'string') throw new Error(`${file}: plugins[${i}].name: required`);
    if (p.name !== 'PodSecurity') return;
    let where = `${file}: plugins[${i}].configuration`;
    let body = p.configuration;
    if (body === undefined && typeof p.path === 'string') {
      const f = path.resolve(path.dirname(file), p.path);
      where = f;
      body = readYaml(f);
    }
    podSecurity = podSecurityConfiguration(body, where);
  });
  return { podSecurity };
}

/** A PodSecurityConfiguration, defaulted and validated as upstream (levels, versions, exemption names). */
export function podSecurityConfiguration(body: unknown, where: string): PodSecurityConfiguration {
  if (
    !isRecord(body) ||
    body.kind !== 'PodSecurityConfiguration' ||
    !POD_SECURITY_VERSIONS.includes(String(body.apiVersion))
  ) {
    throw new Error(`${where}: not a PodSecurityConfiguration (apiVersion ${POD_SECURITY_VERSIONS[0]})`);
  }
  const defaults = isRecord(body.defaults) ? body.defaults : {};
  const exemptions = isRecord(body.exemptions) ? body.exemptions : {};
  const problems: string[] = [];
  const mode = (level: string): LevelVersion => {
    const l = String(defaults[level] ?? 'privileged');
    const v = String(defaults[`${level}-version`] ?? 'latest');
    const parsedLevel = parseLevel(l);
    const parsedVersion = parseVersion(v);
    if (parsedLevel instanceof Error)
      problems.push(`defaults.${level}: Invalid value: ${JSON.stringify(l)}: ${parsedLevel.message}`);
    if (parsedVersion instanceof Error)
      problems.push(`defaults.${level}-version: Invalid value: ${JSON.stringify(v)}: ${parsedVersion.message}`);
    return {
      level: parsedLevel instanceof Error ? 'privileged' : parsedLevel,
      version: parsedVersion instanceof Error ? 'latest' : parsedVersion,
    };
  };
  const names = (field: string, check: (s: string) => string | undefined): string[] => {
    const list = exemptions[field] ?? [];
    if (!Array.isArray(list)) {
      problems.push(`exemptions.${field}: must be a list`);
      return [];
    }
    const seen = new Set<string>();
    list.forEach((item: unknown, i) => {
      const s = String(item);
      const bad = check(s);
      if (bad) problems.push(`exemptions.${field}[${i}]: Invalid value: ${JSON.stringify(s)}: ${bad}`);
      else if (seen.has(s)) problems.push(`exemptions.${field}[${i}]: Duplicate value: ${JSON.stringify(s)}`);
      seen.add(s);
    });
    return [...seen];
  };
  const config: PodSecurityConfiguration = {
    defaults: { enforce: mode('enforce'), warn: mode('warn'), audit: mode('audit') },
    exemptions: {
      namespaces: names('namespaces', checkDns1123Label),
      runtimeClasses: names('runtimeClasses', checkDns1123Subdomain),
      usernames: names('usernames', (s) => (s === '' ? 'username must not be empty' : undefined)),
    },
  };
  if (problems.length) throw new Error(`${where}: ${problems.join(', ')}`);
  return config;
}

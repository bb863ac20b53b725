// kubelet flags and the supported subset of KubeletConfiguration
// (kubelet.config.k8s.io/v1beta1). Flags win over the config file, as upstream.
import fs from 'node:fs';
import os from 'node:os';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from './duration.js';

export interface AgentConfig {
  nodeName: string;
  nodeIP: string;
  staticPodPath: string;
  fileCheckFrequencyMs: number;
  containerRuntimeEndpoint: string;
  rootDir: string;
  podLogsDir: string;
  verbosity: number;
  kubeconfig?: string;
}

export const AGENT_FLAGS: Record<string, string> = {
  'pod-manifest-path': 'static pod manifest directory or file (config: staticPodPath). Default /etc/kubernetes/manifests',
  'file-check-frequency': 'rescan interval for the manifest path (config: fileCheckFrequency). Default 20s',
  'container-runtime-endpoint': 'CRI socket (config: containerRuntimeEndpoint). Default unix:///run/containerd/containerd.sock',
  'hostname-override': 'node name to use instead of the hostname',
  'node-ip': 'IP address of the node (host IP of pods)',
  'root-dir': 'kubelet state directory. Default /var/lib/kubelet',
  config: 'KubeletConfiguration YAML file',
  kubeconfig: 'kubeconfig of the apiserver to join; without it the kubelet runs standalone (static pods only)',
  v: 'log verbosity (4 and up: debug)',
};

/** KubeletConfiguration fields this kubelet reads; others get a warning. */
const SUPPORTED_CONFIG_FIELDS = new Set(['apiVersion', 'kind', 'staticPodPath', 'fileCheckFrequency', 'containerRuntimeEndpoint', 'podLogsDir']);

export function parseFlags(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-')) throw new Error(`unexpected argument "${a}"`);
    const body = a.replace(/^--?/, '');
    const eq = body.indexOf('=');
    let name: string;
    let value: string;
    if (eq >= 0) {
      name = body.slice(0, eq);
      value = body.slice(eq + 1);
    } else {
      name = body;
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new Error(`flag --${name} needs a value`);
      value = next;
      i++;
    }
    out.set(name, value);
  }
  return out;
}

export function loadAgentConfig(argv: string[], warn: (m: string) => void): AgentConfig {
  const flags = parseFlags(argv);
  for (const k of flags.keys()) if (!(k in AGENT_FLAGS)) throw new Error(`unknown flag: --${k}`);
  let file: Record<string, unknown> = {};
  const cfgPath = flags.get('config');
  if (cfgPath) {
    let doc: unknown;
    try {
      doc = parseYaml(fs.readFileSync(cfgPath, 'utf8'), { version: '1.1' });
    } catch (e) {
      throw new Error(`${cfgPath}: cannot read KubeletConfiguration: ${(e as Error).message}`);
    }
    if (typeof doc !== 'object' || doc === null) throw new Error(`${cfgPath}: expected a KubeletConfiguration object`);
    file = doc as Record<string, unknown>;
    if (file.kind !== 'KubeletConfiguration') throw new Error(`${cfgPath}: kind: must be "KubeletConfiguration", got ${JSON.stringify(file.kind)}`);
    if (file.apiVersion !== 'kubelet.config.k8s.io/v1beta1') throw new Error(`${cfgPath}: apiVersion: must be "kubelet.config.k8s.io/v1beta1", got ${JSON.stringify(file.apiVersion)}`);
    for (const k of Object.keys(file)) if (!SUPPORTED_CONFIG_FIELDS.has(k)) warn(`${cfgPath}: field ${k} is not supported by this kubelet and is ignored`);
  }
  const str = (flag: string, field: string, dflt: string): string => {
    const f = flags.get(flag);
    if (f !== undefined) return f;
    const v = file[field];
    if (v === undefined) return dflt;
    if (typeof v !== 'string') throw new Error(`${cfgPath!}: ${field}: must be a string`);
    return v;
  };
  const dur = (flag: string, field: string, dflt: string): number => {
    const raw = str(flag, field, dflt);
    try {
      return parseDuration(raw);
    } catch (e) {
      throw new Error(`${flags.has(flag) ? `--${flag}` : `${cfgPath!}: ${field}`}: ${(e as Error).message}`);
    }
  };
  const rootDir = flags.get('root-dir') ?? '/var/lib/kubelet';
  return {
    nodeName: (flags.get('hostname-override') ?? os.hostname()).toLowerCase(),
    nodeIP: flags.get('node-ip') ?? '',
    staticPodPath: str('pod-manifest-path', 'staticPodPath', '/etc/kubernetes/manifests'),
    fileCheckFrequencyMs: dur('file-check-frequency', 'fileCheckFrequency', '20s'),
    containerRuntimeEndpoint: str('container-runtime-endpoint', 'containerRuntimeEndpoint', 'unix:///run/containerd/containerd.sock'),
    rootDir,
    podLogsDir: typeof file.podLogsDir === 'string' ? file.podLogsDir : '/var/log/pods',
    verbosity: Number(flags.get('v') ?? 0),
    kubeconfig: flags.get('kubeconfig'),
  };
}

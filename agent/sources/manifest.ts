// Turns the bytes of one manifest (file or URL body) into static pods, the
// way upstream kubelet's config/common.go does: name-<node>, UID and
// config.hash from md5(host + source + pod), config.source and config.seen.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { parseAllDocuments } from 'yaml';

import { K8S_YAML } from '../../kube/go-yaml.js';
import { canonicalJson, md5Hex } from '../../kube/hash.js';
import { checkDns1123Subdomain } from '../../kube/names.js';
import { applyPodDefaults } from '../../kube/pod-defaults.js';
import { validatePod } from './validate.js';

export const MAX_MANIFEST_BYTES = 3 * 1024 * 1024; // as the apiserver's request limit

export const ANN_CONFIG_HASH = 'kubernetes.io/config.hash';
export const ANN_CONFIG_SOURCE = 'kubernetes.io/config.source';
export const ANN_CONFIG_SEEN = 'kubernetes.io/config.seen';
export const ANN_CONFIG_MIRROR = 'kubernetes.io/config.mirror';

export type SourceKind = 'file' | 'http';

export interface ManifestResult {
  pods: Pod[];
  /** One entry per problem; the file as a whole or one object in it. */
  errors: string[];
}

function decode(bytes: Buffer, where: string): { doc?: unknown; error?: string } {
  if (bytes.length > MAX_MANIFEST_BYTES)
    return { error: `${where}: file is ${bytes.length} bytes, larger than the ${MAX_MANIFEST_BYTES}-byte limit` };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { error: `${where}: not valid UTF-8` };
  }
  if (text.trim() === '') return { doc: null };
  // YAML 1.1 semantics, like sigs.k8s.io/yaml (yes/on are booleans).
  const docs = parseAllDocuments(text, { ...K8S_YAML, uniqueKeys: true });
  if (!Array.isArray(docs)) return { error: `${where}: could not parse` };
  const real = docs.filter((d) => d.contents !== null || d.errors.length > 0);
  if (real.length > 1)
    return { error: `${where}: holds ${real.length} YAML documents; a manifest holds one Pod or one PodList` };
  const d = real[0];
  if (!d) return { doc: null };
  const err = d.errors[0];
  if (err) {
    const pos = err.linePos?.[0];
    return {
      error: `${where}: invalid YAML/JSON${pos ? ` at line ${pos.line}, column ${pos.col}` : ''}: ${err.message.split('\n')[0]}`,
    };
  }
  return { doc: d.toJS({ maxAliasCount: 100 }) as unknown };
}

/** Parse one manifest into pods. `source` is the file path or URL. Never throws: any failure is an error of this manifest alone. */
export function parseManifest(bytes: Buffer, source: string, kind: SourceKind, nodeName: string): ManifestResult {
  try {
    return parseUnchecked(bytes, source, kind, nodeName);
  } catch (e) {
    // Alias bombs, self-referencing aliases and whatever else slips past validation stop here.
    const why =
      e instanceof RangeError ? 'the document is too deeply nested or self-referencing' : (e as Error).message;
    return { pods: [], errors: [`${source}: cannot be read as a Pod: ${why}`] };
  }
}

function parseUnchecked(bytes: Buffer, source: string, kind: SourceKind, nodeName: string): ManifestResult {
  const { doc, error } = decode(bytes, source);
  if (error) return { pods: [], errors: [error] };
  if (doc === null || doc === undefined) return { pods: [], errors: [] };
  if (typeof doc !== 'object' || Array.isArray(doc))
    return {
      pods: [],
      errors: [`${source}: expected a Pod or PodList object, got ${Array.isArray(doc) ? 'array' : typeof doc}`],
    };
  const o = doc as Record<string, unknown>;
  let items: unknown[];
  if (o.kind === 'Pod') items = [o];
  else if (o.kind === 'PodList' || o.kind === 'List') {
    if (!Array.isArray(o.items)) return { pods: [], errors: [`${source}: ${o.kind as string}: items: Required value`] };
    items = o.items;
  } else {
    return {
      pods: [],
      errors: [
        `${source}: kind: Unsupported value: ${JSON.stringify(o.kind ?? null)}: a manifest holds a Pod or a PodList`,
      ],
    };
  }
  const res: ManifestResult = { pods: [], errors: [] };
  const names = new Set<string>();
  items.forEach((item, i) => {
    const label = itemLabel(item, i, items.length > 1);
    if (
      items.length > 1 &&
      (item as Record<string, unknown> | null)?.kind !== undefined &&
      (item as Record<string, unknown>).kind !== 'Pod'
    ) {
      res.errors.push(
        `${source}: ${label}: kind: Unsupported value: ${JSON.stringify((item as Record<string, unknown>).kind)}`,
      );
      return;
    }
    if (o.apiVersion !== undefined && o.apiVersion !== 'v1') {
      res.errors.push(
        `${source}: ${label}: apiVersion: Unsupported value: ${JSON.stringify(o.apiVersion)}: must be "v1"`,
      );
      return;
    }
    const problems = validatePod(item);
    if (problems.length) {
      res.errors.push(...problems.map((p) => `${source}: ${label}: ${p}`));
      return;
    }
    const pod = toStaticPod(item as Pod, source, kind, nodeName);
    // The mirror pod's name carries the node's: it must still be a valid name.
    const badName = checkDns1123Subdomain(pod.metadata!.name!);
    if (badName) {
      res.errors.push(
        `${source}: ${label}: metadata.name: Invalid value: "${pod.metadata!.name!}": ${badName} (the name with the node suffix "-${nodeName.toLowerCase()}")`,
      );
      return;
    }
    if (names.has(pod.metadata!.name!)) {
      res.errors.push(`${source}: ${label}: metadata.name: Duplicate value: "${(item as Pod).metadata!.name!}"`);
      return;
    }
    names.add(pod.metadata!.name!);
    res.pods.push(pod);
  });
  return res;
}

function itemLabel(item: unknown, i: number, inList: boolean): string {
  const name = (item as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  const n = typeof name === 'string' ? `Pod "${name}"` : 'Pod';
  return inList ? `items[${i}] ${n}` : n;
}

/** Upstream applyDefaults for file/http pods. */
export function toStaticPod(input: Pod, source: string, kind: SourceKind, nodeName: string): Pod {
  const pod = applyPodDefaults(structuredClone(input));
  const md = pod.metadata! as { -readonly [K in keyof NonNullable<Pod['metadata']>]: NonNullable<Pod['metadata']>[K] };
  const node = nodeName.toLowerCase();
  if (!md.uid) {
    md.uid = md5Hex(`host:${nodeName}`, `${kind === 'file' ? 'file' : 'url'}:${source}`, canonicalJson(pod));
  }
  md.name = `${md.name!}-${node}`;
  md.namespace = md.namespace || 'default';
  md.annotations = { ...(md.annotations ?? {}), [ANN_CONFIG_HASH]: md.uid, [ANN_CONFIG_SOURCE]: kind };
  const spec = pod.spec!;
  spec.nodeName = nodeName;
  spec.tolerations = [...(spec.tolerations ?? []), { operator: 'Exists', effect: 'NoExecute' }];
  (pod as { status?: Pod['status'] }).status = { phase: 'Pending' };
  return pod;
}

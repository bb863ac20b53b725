// What goes into configMap, secret, downwardAPI and projected volumes: the
// files (path, bytes, mode) built from API objects and the pod, with items,
// defaultMode and optional as upstream. Errors read as upstream's
// MountVolume.SetUp messages.
import type { Pod } from 'kubernetes-types/core/v1.js';

import type { KObj } from '../../kube/client.js';
import { type DownwardContext, fieldValue, resourceValue } from '../pods/downward-api.js';
import type { ApiObjects } from './api-objects.js';
import { checkPayloadPath, type Payload } from './atomic-writer.js';
import type { PodCertificates, PodCertificateSource } from './pod-certificates.js';
import {
  bundlesOfSigner,
  type ClusterTrustBundle,
  type ClusterTrustBundleProjection,
  NO_SIGNER_MATCH,
  normalizeTrustAnchors,
} from './trust-anchors.js';
import { VolumeError } from './volume-error.js';

export { VolumeError };

const DEFAULT_MODE = 0o644;

interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

/** Data of a ConfigMap (text and binaryData) or a Secret (base64), by key. */
function objectData(o: KObj, secret: boolean): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries((o.data ?? {}) as Record<string, string>))
    out.set(k, secret ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries((o.binaryData ?? {}) as Record<string, string>))
    out.set(k, Buffer.from(v, 'base64'));
  return out;
}

function project(
  out: Payload,
  data: Map<string, Buffer>,
  items: KeyToPath[] | undefined,
  mode: number,
  what: string,
  optional: boolean,
): void {
  const list: KeyToPath[] = items?.length ? items : [...data.keys()].map((key) => ({ key, path: key }));
  for (const it of list) {
    const bad = checkPayloadPath(it.path);
    if (bad) throw new VolumeError(`${what}: item path "${it.path}" ${bad}`);
    const buf = data.get(it.key);
    if (!buf) {
      if (optional) continue;
      throw new VolumeError(
        `${what.startsWith('configmap') ? 'configmap' : 'secret'} references non-existent config key: ${it.key}`,
      );
    }
    out.set(it.path, { data: buf, mode: it.mode ?? mode });
  }
}

export async function configMapFiles(
  objects: ApiObjects,
  ns: string,
  src: KObj,
  out: Payload,
  mode: number,
): Promise<void> {
  const cm = await objects.configMap(ns, src.name);
  if (!cm) {
    if (src.optional) return;
    throw new VolumeError(`configmap "${String(src.name)}" not found`);
  }
  project(out, objectData(cm, false), src.items, mode, `configmap "${String(src.name)}"`, src.optional === true);
}

export async function secretFiles(
  objects: ApiObjects,
  ns: string,
  name: string,
  src: KObj,
  out: Payload,
  mode: number,
): Promise<void> {
  const s = await objects.secret(ns, name);
  if (!s) {
    if (src.optional) return;
    throw new VolumeError(`secret "${name}" not found`);
  }
  project(out, objectData(s, true), src.items, mode, `secret "${name}"`, src.optional === true);
}

export function downwardFiles(pod: Pod, items: KObj[], out: Payload, mode: number, ctx: DownwardContext): void {
  for (const it of items) {
    const bad = checkPayloadPath(it.path);
    if (bad) throw new VolumeError(`downwardAPI: item path "${String(it.path)}" ${bad}`);
    let v: string;
    try {
      v = it.fieldRef
        ? fieldValue(pod, it.fieldRef.fieldPath, ctx)
        : resourceValue(
            pod,
            it.resourceFieldRef.containerName,
            it.resourceFieldRef.resource,
            it.resourceFieldRef.divisor,
            ctx,
          );
    } catch (e) {
      throw new VolumeError(`downwardAPI: ${(e as Error).message}`);
    }
    out.set(it.path, { data: Buffer.from(v), mode: it.mode ?? mode });
  }
}

/** A clusterTrustBundle source: the anchors of a bundle by name, or of a signer's bundles a selector picks. */
async function trustBundleFile(
  objects: ApiObjects,
  src: ClusterTrustBundleProjection,
  out: Payload,
  mode: number,
): Promise<void> {
  const bad = checkPayloadPath(src.path);
  if (bad) throw new VolumeError(`clusterTrustBundle: path "${src.path}" ${bad}`);
  let bundles: ClusterTrustBundle[];
  if (src.name !== undefined) {
    const b = await objects.clusterTrustBundle(src.name);
    if (!b && !src.optional)
      throw new VolumeError(
        `while getting ClusterTrustBundle: clustertrustbundle.certificates.k8s.io "${src.name}" not found`,
      );
    bundles = b ? [b as ClusterTrustBundle] : [];
  } else if (src.signerName !== undefined) {
    bundles = bundlesOfSigner(
      (await objects.clusterTrustBundles()) as ClusterTrustBundle[],
      src.signerName,
      src.labelSelector,
    );
    if (!bundles.length && !src.optional) throw new VolumeError(NO_SIGNER_MATCH);
  } else throw new VolumeError('ClusterTrustBundle projection requires either name or signerName to be set');
  out.set(src.path, { data: normalizeTrustAnchors(bundles), mode });
}

/** A podCertificate source: the key and chain in one bundle file, or in two, with upstream's modes. */
async function podCertificateFiles(
  pod: Pod,
  volume: string,
  index: number,
  src: PodCertificateSource,
  certs: PodCertificates | undefined,
  out: Payload,
  defaultMode: number,
): Promise<void> {
  for (const p of [src.credentialBundlePath, src.keyPath, src.certificateChainPath]) {
    const bad = p ? checkPayloadPath(p) : undefined;
    if (bad) throw new VolumeError(`podCertificate: path "${p}" ${bad}`);
  }
  if (!certs) throw new VolumeError('podCertificate projection needs a kubelet with an apiserver');
  const { key, chain } = await certs.credentials(pod, volume, index, src);
  // Keys are the owner's alone once a group may read the volume (upstream: 0600 with an fsGroup).
  const mode = pod.spec?.securityContext?.fsGroup !== undefined ? 0o600 : defaultMode;
  if (src.credentialBundlePath) out.set(src.credentialBundlePath, { data: Buffer.concat([key, chain]), mode });
  if (src.keyPath) out.set(src.keyPath, { data: key, mode });
  if (src.certificateChainPath) out.set(src.certificateChainPath, { data: chain, mode });
}

/** The files of one configMap, secret, downwardAPI or projected volume. */
export async function volumeFiles(
  pod: Pod,
  v: KObj,
  objects: ApiObjects,
  ctx: DownwardContext,
  certs?: PodCertificates,
): Promise<Payload> {
  const ns = pod.metadata!.namespace!;
  const out: Payload = new Map();
  if (v.configMap) await configMapFiles(objects, ns, v.configMap, out, v.configMap.defaultMode ?? DEFAULT_MODE);
  else if (v.secret)
    await secretFiles(objects, ns, v.secret.secretName, v.secret, out, v.secret.defaultMode ?? DEFAULT_MODE);
  else if (v.downwardAPI)
    downwardFiles(pod, v.downwardAPI.items ?? [], out, v.downwardAPI.defaultMode ?? DEFAULT_MODE, ctx);
  else if (v.projected) {
    const mode = v.projected.defaultMode ?? DEFAULT_MODE;
    for (const [index, s] of ((v.projected.sources ?? []) as KObj[]).entries()) {
      if (s.configMap) await configMapFiles(objects, ns, s.configMap, out, mode);
      else if (s.secret) await secretFiles(objects, ns, s.secret.name, s.secret, out, mode);
      else if (s.downwardAPI) downwardFiles(pod, s.downwardAPI.items ?? [], out, mode, ctx);
      else if (s.serviceAccountToken) {
        const t = s.serviceAccountToken;
        const bad = checkPayloadPath(t.path);
        if (bad) throw new VolumeError(`serviceAccountToken: path "${String(t.path)}" ${bad}`);
        let token: string;
        try {
          token = await objects.token(pod as KObj, t.audience, t.expirationSeconds ?? 3600);
        } catch (e) {
          throw new VolumeError(`failed to fetch token: ${(e as Error).message}`);
        }
        out.set(t.path, { data: Buffer.from(token), mode });
      } else if (s.clusterTrustBundle) await trustBundleFile(objects, s.clusterTrustBundle, out, mode);
      else if (s.podCertificate) await podCertificateFiles(pod, v.name, index, s.podCertificate, certs, out, mode);
    }
  }
  return out;
}

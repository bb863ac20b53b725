// CertificateSigningRequests (certificates.k8s.io/v1): what the apiserver fills in on create, validation, the
// approval rules, and signing with the cluster CA (openssl ca, as the rest of the dev PKI). The request itself is
// read by csr-request.ts; what each signer accepts is in signer-rules.ts.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { User } from '../api/admission.js';
import type { Cause } from '../api/errors.js';
import type { Obj } from '../storage/store.js';
import { type CertificateRequest, parseCertificateRequest } from './csr-request.js';

/** PrepareForCreate: who asked comes from the request, never from the body; status starts empty. */
export function prepareCsr(o: Obj, user: User & { uid?: string; extra?: Record<string, string[]> }): void {
  o.spec = {
    ...(o.spec ?? {}),
    username: user.name,
    groups: user.groups,
    ...(user.uid ? { uid: user.uid } : {}),
    ...(user.extra ? { extra: user.extra } : {}),
  };
  if (!user.uid) delete o.spec.uid;
  o.status = {};
}

const pemOf = (o: Obj): string | undefined => {
  try {
    const pem = Buffer.from(String(o.spec?.request ?? ''), 'base64').toString('utf8');
    return /-----BEGIN CERTIFICATE REQUEST-----/.test(pem) ? pem : undefined;
  } catch {
    return undefined;
  }
};

export function validateCsr(o: Obj): Cause[] {
  const out: Cause[] = [];
  if (!o.spec?.request) out.push({ field: 'spec.request', reason: 'FieldValueRequired', message: 'Required value' });
  else {
    try {
      requestOf(o);
    } catch (e) {
      out.push({ field: 'spec.request', message: `Invalid value: []byte{...}: ${(e as Error).message}` });
    }
  }
  if (!o.spec?.signerName)
    out.push({ field: 'spec.signerName', reason: 'FieldValueRequired', message: 'Required value' });
  if (!Array.isArray(o.spec?.usages) || !o.spec.usages.length)
    out.push({ field: 'spec.usages', reason: 'FieldValueRequired', message: 'Required value' });
  if (
    o.spec?.expirationSeconds !== undefined &&
    (!Number.isInteger(o.spec.expirationSeconds) || o.spec.expirationSeconds < 600)
  )
    out.push({
      field: 'spec.expirationSeconds',
      message: `Invalid value: ${JSON.stringify(o.spec.expirationSeconds)}: may not specify a duration less than 600 seconds (10 minutes)`,
    });
  return out;
}

const conditionTypes = (o: Obj): Set<string> =>
  new Set(((o.status?.conditions ?? []) as Obj[]).map((c) => c.type as string));

/** The approval subresource: conditions only; Approved and Denied exclusive and, once there, permanent. */
export function validateApproval(cur: Obj, next: Obj): Cause[] {
  const out: Cause[] = [];
  const conds = (next.status?.conditions ?? []) as Obj[];
  const had = conditionTypes(cur);
  const has = conditionTypes(next);
  for (const t of ['Approved', 'Denied'])
    if (had.has(t) && !has.has(t))
      out.push({
        field: 'status.conditions',
        reason: 'FieldValueForbidden',
        message: `Forbidden: updates may not remove a condition of type ${JSON.stringify(t)}`,
      });
  if (has.has('Approved') && has.has('Denied')) {
    const i = conds.findIndex((c) => c.type === 'Denied');
    out.push({
      field: `status.conditions[${i}].type`,
      message: 'Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    });
  }
  conds.forEach((c, i) => {
    if (!c.type)
      out.push({ field: `status.conditions[${i}].type`, reason: 'FieldValueRequired', message: 'Required value' });
    if (c.status !== undefined && !['True', 'False', 'Unknown'].includes(c.status))
      out.push({
        field: `status.conditions[${i}].status`,
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(c.status)}: supported values: "False", "True", "Unknown"`,
      });
  });
  return out;
}

/** The status subresource: approval conditions stay as they are, and a certificate once issued never changes. */
export function validateCsrStatus(cur: Obj, next: Obj): Cause[] {
  const out: Cause[] = [];
  const approval = (o: Obj, t: string): string =>
    JSON.stringify(((o.status?.conditions ?? []) as Obj[]).filter((c) => c.type === t));
  for (const t of ['Approved', 'Denied']) {
    if (approval(cur, t) === approval(next, t)) continue;
    const verb = approval(cur, t) === '[]' ? 'add' : approval(next, t) === '[]' ? 'remove' : 'modify';
    out.push({
      field: 'status.conditions',
      reason: 'FieldValueForbidden',
      message: `Forbidden: updates may not ${verb} a condition of type ${JSON.stringify(t)}`,
    });
  }
  const certificate = (o: Obj): string => String(o.status?.certificate ?? '');
  if (certificate(cur) && certificate(next) !== certificate(cur))
    out.push({
      field: 'status.certificate',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: updates may not modify existing certificate content',
    });
  return out;
}

export const approved = (o: Obj): boolean => conditionTypes(o).has('Approved') && !conditionTypes(o).has('Denied');
export const decided = (o: Obj): boolean => conditionTypes(o).has('Approved') || conditionTypes(o).has('Denied');

/** The request of a CSR object, parsed and its signature verified; throws with why it is refused. */
export function requestOf(o: Obj): CertificateRequest {
  return parseCertificateRequest(Buffer.from(String(o.spec?.request ?? ''), 'base64').toString('latin1'));
}

const KEY_USAGES: Record<string, string> = {
  'digital signature': 'digitalSignature',
  'key encipherment': 'keyEncipherment',
  'content commitment': 'nonRepudiation',
  'key agreement': 'keyAgreement',
};
const EXT_USAGES: Record<string, string> = {
  'client auth': 'clientAuth',
  'server auth': 'serverAuth',
  'code signing': 'codeSigning',
  'email protection': 'emailProtection',
};

const opensslTime = (ms: number): string =>
  new Date(ms)
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');

/**
 * Signs the request with the CA in `pkiDir` for its usages, as kube-controller-manager's signer: valid from five
 * minutes ago (clock skew) for `spec.expirationSeconds`, at most `maxSeconds` (--cluster-signing-duration, a year);
 * SANs copied from the request. The certificate, PEM. (openssl ca, as it takes exact start and end times.)
 */
export function signCsr(o: Obj, pkiDir: string, maxSeconds = 365 * 86400, now = Date.now()): string {
  const pem = pemOf(o)!;
  const usages = (o.spec?.usages ?? []) as string[];
  const ku = usages.map((u) => KEY_USAGES[u]).filter(Boolean);
  const eku = usages.map((u) => EXT_USAGES[u]).filter(Boolean);
  const ext = [
    'basicConstraints=critical,CA:FALSE',
    ...(ku.length ? [`keyUsage=critical,${ku.join(',')}`] : []),
    ...(eku.length ? [`extendedKeyUsage=${eku.join(',')}`] : []),
  ].join('\n');
  const seconds = Math.min(Number(o.spec?.expirationSeconds ?? maxSeconds), maxSeconds);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-csr-'));
  try {
    const f = (n: string) => path.join(tmp, n);
    fs.writeFileSync(f('ext'), `${ext}\n`);
    fs.writeFileSync(f('req.pem'), pem);
    fs.writeFileSync(f('index.txt'), '');
    fs.writeFileSync(f('serial'), `${randomBytes(16).toString('hex')}\n`);
    fs.writeFileSync(
      f('ca.cnf'),
      `[ca]\ndefault_ca = d\n[d]\ndatabase = ${f('index.txt')}\nnew_certs_dir = ${tmp}\nserial = ${f('serial')}\ndefault_md = sha256\npolicy = p\nunique_subject = no\ncopy_extensions = copy\n[p]\ncommonName = optional\norganizationName = optional\n`,
    );
    execFileSync(
      'openssl',
      [
        'ca',
        '-batch',
        '-config',
        f('ca.cnf'),
        '-cert',
        path.join(pkiDir, 'ca.crt'),
        '-keyfile',
        path.join(pkiDir, 'ca.key'),
        '-in',
        f('req.pem'),
        '-out',
        f('cert.pem'),
        '-notext',
        '-preserveDN',
        '-startdate',
        opensslTime(now - 5 * 60_000),
        '-enddate',
        opensslTime(now + seconds * 1000),
        '-extfile',
        f('ext'),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return fs.readFileSync(f('cert.pem'), 'utf8');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

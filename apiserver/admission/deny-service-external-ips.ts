// DenyServiceExternalIPs (opt-in, --enable-admission-plugins): no new Service may set externalIPs, and an update
// may keep or drop the ones it has but add none (upstream's plugin; the mitigation for CVE-2020-8554).
import type { AdmissionPlugin } from '../api/admission.js';
import { errors } from '../api/errors.js';

const ips = (o: { spec?: { externalIPs?: unknown } } | undefined): string[] =>
  Array.isArray(o?.spec?.externalIPs) ? (o.spec.externalIPs as unknown[]).map(String) : [];

export const denyServiceExternalIPs: AdmissionPlugin = {
  name: 'DenyServiceExternalIPs',
  admit(a): void {
    if (a.resource.group !== '' || a.resource.resource !== 'services' || a.subresource !== '') return;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    const next = ips(a.object);
    if (!next.length) return;
    const old = new Set(ips(a.oldObject));
    if (a.operation === 'UPDATE' && next.every((ip) => old.has(ip))) return;
    throw errors.forbiddenObject('services', '', a.name, 'externalIPs are not allowed');
  },
};

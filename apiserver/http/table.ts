// meta.k8s.io/v1 Table output for `kubectl get`, following the upstream
// printers (pkg/printers/internalversion) for the kinds we serve.
import { customColumns } from '../crd/columns.js';
import type { ResourceDef } from '../resources.js';
import type { Obj } from '../storage/store.js';

interface Col {
  name: string;
  type: string;
  format?: string;
  description: string;
  priority: number;
}

const col = (name: string, priority = 0, type = 'string', format = ''): Col => ({
  name,
  type,
  format,
  description: name,
  priority,
});

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration */
/** upstream GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order. */
function accessModes(modes: string[] | undefined): string {
  const short: [string, string][] = [
    ['ReadWriteOnce', 'RWO'],
    ['ReadOnlyMany', 'ROX'],
    ['ReadWriteMany', 'RWX'],
    ['ReadWriteOncePod', 'RWOP'],
  ];
  return short
    .filter(([m]) => (modes ?? []).includes(m))
    .map(([, s]) => s)
    .join(',');
}

export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 192) return h % 24 === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  const y = Math.floor(h / (24 * 365));
  const dy = Math.floor(h / 24) % 365;
  if (h < 24 * 365 * 8) return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  return `${y}y`;
}

const age = (ts: string | undefined, now: number): string => (ts ? humanDuration(now - Date.parse(ts)) : '<unknown>');
const none = (v: unknown): string => (v === undefined || v === null || v === '' ? '<none>' : String(v));

export function podStatus(pod: Obj, now = Date.now()): { ready: string; status: string; restarts: string } {
  const spec = pod.spec ?? {};
  const st = pod.status ?? {};
  let restarts = 0;
  let ready = 0;
  let lastRestart = 0;
  // Native sidecars (init containers with restartPolicy Always) count among the containers, as upstream's printer.
  const sidecars = new Set(
    ((spec.initContainers ?? []) as Obj[]).filter((c) => c.restartPolicy === 'Always').map((c) => c.name as string),
  );
  let sidecarRestarts = 0;
  let sidecarLastRestart = 0;
  let reason: string = st.reason || st.phase || '';
  let initializing = false;
  const inits = (st.initContainerStatuses ?? []) as Obj[];
  for (const [i, c] of inits.entries()) {
    restarts += c.restartCount ?? 0;
    const fin = c.lastState?.terminated?.finishedAt;
    if (fin) lastRestart = Math.max(lastRestart, Date.parse(fin));
    const sidecar = sidecars.has(c.name);
    if (sidecar) {
      sidecarRestarts += c.restartCount ?? 0;
      if (fin) sidecarLastRestart = Math.max(sidecarLastRestart, Date.parse(fin));
    }
    const t = c.state?.terminated;
    const w = c.state?.waiting;
    if (t && t.exitCode === 0) continue;
    if (sidecar && c.started === true) {
      if (c.ready) ready++;
      continue;
    }
    if (t)
      reason = t.reason ? `Init:${t.reason}` : t.signal ? `Init:Signal:${t.signal}` : `Init:ExitCode:${t.exitCode}`;
    else if (w?.reason && w.reason !== 'PodInitializing') reason = `Init:${w.reason}`;
    else reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
    initializing = true;
    break;
  }
  const initializedTrue = ((st.conditions ?? []) as Obj[]).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initializedTrue) {
    restarts = sidecarRestarts;
    lastRestart = sidecarLastRestart;
    let hasRunning = false;
    for (const c of [...((st.containerStatuses ?? []) as Obj[])].reverse()) {
      restarts += c.restartCount ?? 0;
      const fin = c.lastState?.terminated?.finishedAt;
      if (fin) lastRestart = Math.max(lastRestart, Date.parse(fin));
      const w = c.state?.waiting;
      const t = c.state?.terminated;
      if (w?.reason) reason = w.reason;
      else if (t?.reason) reason = t.reason;
      else if (t) reason = t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode}`;
      else if (c.ready && c.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      const podReady = ((st.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
      reason = podReady ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata?.deletionTimestamp) reason = st.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  const r = lastRestart ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
  return { ready: `${ready}/${(spec.containers ?? []).length + sidecars.size}`, status: reason, restarts: r };
}

function servicePorts(svc: Obj): string {
  const ports = (svc.spec?.ports ?? []) as Obj[];
  if (!ports.length) return '<none>';
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`)).join(',');
}

function externalIP(svc: Obj): string {
  const ext = (svc.spec?.externalIPs ?? []) as string[];
  if (svc.spec?.type === 'LoadBalancer') {
    const ing = ((svc.status?.loadBalancer?.ingress ?? []) as Obj[]).map((i) => i.ip || i.hostname);
    const all = [...ing, ...ext];
    return all.length ? all.join(',') : '<pending>';
  }
  return ext.length ? ext.join(',') : '<none>';
}

const selectorString = (sel: Obj | undefined): string => {
  const ml = sel?.matchLabels ?? sel ?? {};
  const parts = Object.entries(ml as Record<string, string>)
    .filter(([k]) => k !== 'matchExpressions')
    .map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(',') : '<none>';
};

const containersOf = (tmpl: Obj | undefined): [string, string] => {
  const cs = (tmpl?.spec?.containers ?? []) as Obj[];
  return [cs.map((c) => c.name).join(','), cs.map((c) => c.image).join(',')];
};

interface Printer {
  columns: Col[];
  row(o: Obj, now: number): unknown[];
}

/** ReplicaSets and ReplicationControllers print alike (upstream's printReplicaSet and printReplicationController). */
const REPLICAS_PRINTER: Printer = {
  columns: [
    col('Name', 0, 'string', 'name'),
    col('Desired', 0, 'integer'),
    col('Current', 0, 'integer'),
    col('Ready', 0, 'integer'),
    col('Age'),
    col('Containers', 1),
    col('Images', 1),
    col('Selector', 1),
  ],
  row: (o, now) => {
    const [c, i] = containersOf(o.spec?.template);
    return [
      o.metadata.name,
      o.spec?.replicas ?? 0,
      o.status?.replicas ?? 0,
      o.status?.readyReplicas ?? 0,
      age(o.metadata.creationTimestamp, now),
      c,
      i,
      selectorString(o.spec?.selector),
    ];
  },
};

const PRINTERS: Record<string, Printer> = {
  pods: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Ready'),
      col('Status'),
      col('Restarts'),
      col('Age'),
      col('IP', 1),
      col('Node', 1),
      col('Nominated Node', 1),
      col('Readiness Gates', 1),
    ],
    row: (o, now) => {
      const s = podStatus(o, now);
      const gates = (o.spec?.readinessGates ?? []) as Obj[];
      const gatesTrue = gates.filter((g) =>
        ((o.status?.conditions ?? []) as Obj[]).some((c) => c.type === g.conditionType && c.status === 'True'),
      ).length;
      return [
        o.metadata.name,
        s.ready,
        s.status,
        s.restarts,
        age(o.metadata.creationTimestamp, now),
        none(o.status?.podIP),
        none(o.spec?.nodeName),
        none(o.status?.nominatedNodeName),
        gates.length ? `${gatesTrue}/${gates.length}` : '<none>',
      ];
    },
  },
  nodes: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Status'),
      col('Roles'),
      col('Age'),
      col('Version'),
      col('Internal-IP', 1),
      col('External-IP', 1),
      col('OS-Image', 1),
      col('Kernel-Version', 1),
      col('Container-Runtime', 1),
    ],
    row: (o, now) => {
      const ready = ((o.status?.conditions ?? []) as Obj[]).find((c) => c.type === 'Ready');
      // As upstream printNode: any Ready status but True (False or Unknown) prints NotReady.
      let status = ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown';
      if (o.spec?.unschedulable) status += ',SchedulingDisabled';
      const roles = Object.keys(o.metadata.labels ?? {})
        .filter((k) => k.startsWith('node-role.kubernetes.io/'))
        .map((k) => k.slice('node-role.kubernetes.io/'.length));
      const addr = (t: string) => none(((o.status?.addresses ?? []) as Obj[]).find((a) => a.type === t)?.address);
      const info = o.status?.nodeInfo ?? {};
      return [
        o.metadata.name,
        status,
        roles.length ? roles.sort().join(',') : '<none>',
        age(o.metadata.creationTimestamp, now),
        info.kubeletVersion ?? '',
        addr('InternalIP'),
        addr('ExternalIP'),
        none(info.osImage),
        none(info.kernelVersion),
        none(info.containerRuntimeVersion),
      ];
    },
  },
  services: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Type'),
      col('Cluster-IP'),
      col('External-IP'),
      col('Port(s)'),
      col('Age'),
      col('Selector', 1),
    ],
    row: (o, now) => [
      o.metadata.name,
      o.spec?.type ?? 'ClusterIP',
      none(o.spec?.clusterIP),
      externalIP(o),
      servicePorts(o),
      age(o.metadata.creationTimestamp, now),
      selectorString(o.spec?.selector),
    ],
  },
  endpoints: {
    columns: [col('Name', 0, 'string', 'name'), col('Endpoints'), col('Age')],
    row: (o, now) => {
      // printEndpoints/formatEndpoints: ip:port for every address and port, at most 3, then "+ N more...".
      const all: string[] = [];
      for (const ss of (o.subsets ?? []) as Obj[]) {
        const ports = (ss.ports ?? []) as Obj[];
        for (const a of (ss.addresses ?? []) as Obj[]) {
          if (!ports.length) all.push(a.ip);
          for (const p of ports) all.push(`${a.ip}:${p.port}`);
        }
      }
      const eps =
        all.length === 0
          ? '<none>'
          : all.slice(0, 3).join(',') + (all.length > 3 ? ` + ${all.length - 3} more...` : '');
      return [o.metadata.name, eps, age(o.metadata.creationTimestamp, now)];
    },
  },
  endpointslices: {
    columns: [col('Name', 0, 'string', 'name'), col('AddressType'), col('Ports'), col('Endpoints'), col('Age')],
    row: (o, now) => {
      const ports = ((o.ports ?? []) as Obj[]).map((p) => p.port).filter((p) => p !== undefined);
      const addrs = ((o.endpoints ?? []) as Obj[]).flatMap((e) => (e.addresses ?? []) as string[]);
      const eps =
        addrs.length === 0
          ? '<none>'
          : addrs.slice(0, 3).join(',') + (addrs.length > 3 ? ` + ${addrs.length - 3} more...` : '');
      return [
        o.metadata.name,
        o.addressType ?? '',
        ports.length ? ports.join(',') : '<unset>',
        eps,
        age(o.metadata.creationTimestamp, now),
      ];
    },
  },
  deployments: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Ready'),
      col('Up-to-date', 0, 'integer'),
      col('Available', 0, 'integer'),
      col('Age'),
      col('Containers', 1),
      col('Images', 1),
      col('Selector', 1),
    ],
    row: (o, now) => {
      const [c, i] = containersOf(o.spec?.template);
      return [
        o.metadata.name,
        `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`,
        o.status?.updatedReplicas ?? 0,
        o.status?.availableReplicas ?? 0,
        age(o.metadata.creationTimestamp, now),
        c,
        i,
        selectorString(o.spec?.selector),
      ];
    },
  },
  replicasets: REPLICAS_PRINTER,
  replicationcontrollers: REPLICAS_PRINTER,
  daemonsets: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Desired', 0, 'integer'),
      col('Current', 0, 'integer'),
      col('Ready', 0, 'integer'),
      col('Up-to-date', 0, 'integer'),
      col('Available', 0, 'integer'),
      col('Node Selector'),
      col('Age'),
      col('Containers', 1),
      col('Images', 1),
      col('Selector', 1),
    ],
    row: (o, now) => {
      const [c, i] = containersOf(o.spec?.template);
      const ns = Object.entries((o.spec?.template?.spec?.nodeSelector ?? {}) as Record<string, string>)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const st = o.status ?? {};
      return [
        o.metadata.name,
        st.desiredNumberScheduled ?? 0,
        st.currentNumberScheduled ?? 0,
        st.numberReady ?? 0,
        st.updatedNumberScheduled ?? 0,
        st.numberAvailable ?? 0,
        ns || '<none>',
        age(o.metadata.creationTimestamp, now),
        c,
        i,
        selectorString(o.spec?.selector),
      ];
    },
  },
  statefulsets: {
    columns: [col('Name', 0, 'string', 'name'), col('Ready'), col('Age'), col('Containers', 1), col('Images', 1)],
    row: (o, now) => {
      const [c, i] = containersOf(o.spec?.template);
      return [
        o.metadata.name,
        `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`,
        age(o.metadata.creationTimestamp, now),
        c,
        i,
      ];
    },
  },
  persistentvolumeclaims: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Status'),
      col('Volume'),
      col('Capacity'),
      col('Access Modes'),
      col('StorageClass'),
      col('VolumeAttributesClass'),
      col('Age'),
      col('VolumeMode', 1),
    ],
    row: (o, now) => {
      const bound = o.status?.phase === 'Bound';
      return [
        o.metadata.name,
        o.metadata.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? ''),
        o.spec?.volumeName ?? '',
        bound ? (o.status?.capacity?.storage ?? '') : '',
        bound ? accessModes(o.status?.accessModes) : '',
        o.spec?.storageClassName ?? '<unset>',
        o.status?.currentVolumeAttributesClassName ?? '<unset>',
        age(o.metadata.creationTimestamp, now),
        o.spec?.volumeMode ?? '<unset>',
      ];
    },
  },
  persistentvolumes: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Capacity'),
      col('Access Modes'),
      col('Reclaim Policy'),
      col('Status'),
      col('Claim'),
      col('StorageClass'),
      col('VolumeAttributesClass'),
      col('Reason'),
      col('Age'),
      col('VolumeMode', 1),
    ],
    row: (o, now) => {
      const ref = o.spec?.claimRef as Obj | undefined;
      return [
        o.metadata.name,
        o.spec?.capacity?.storage ?? '',
        accessModes(o.spec?.accessModes),
        o.spec?.persistentVolumeReclaimPolicy ?? '',
        o.metadata.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? ''),
        ref ? `${ref.namespace}/${ref.name}` : '',
        o.spec?.storageClassName ?? '',
        o.spec?.volumeAttributesClassName ?? '<unset>',
        o.status?.reason ?? '',
        age(o.metadata.creationTimestamp, now),
        o.spec?.volumeMode ?? '<unset>',
      ];
    },
  },
  storageclasses: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Provisioner'),
      col('ReclaimPolicy'),
      col('VolumeBindingMode'),
      col('AllowVolumeExpansion', 0, 'boolean'),
      col('Age'),
    ],
    row: (o, now) => {
      const ann = (o.metadata.annotations ?? {}) as Record<string, string>;
      const isDefault =
        ann['storageclass.kubernetes.io/is-default-class'] === 'true' ||
        ann['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
      return [
        `${o.metadata.name}${isDefault ? ' (default)' : ''}`,
        o.provisioner ?? '',
        o.reclaimPolicy ?? 'Delete',
        o.volumeBindingMode ?? 'Immediate',
        o.allowVolumeExpansion ?? false,
        age(o.metadata.creationTimestamp, now),
      ];
    },
  },
  resourcequotas: {
    columns: [col('Name', 0, 'string', 'name'), col('Age'), col('Request'), col('Limit')],
    row: (o, now) => {
      // upstream printResourceQuota: "resource: used/hard", limits.* in their own column.
      const hard = (o.status?.hard ?? {}) as Record<string, string>;
      const used = (o.status?.used ?? {}) as Record<string, string>;
      const fmt = (k: string): string => `${k}: ${used[k] ?? '0'}/${hard[k]}`;
      const keys = Object.keys(o.spec?.hard ?? {})
        .filter((k) => k in hard)
        .sort();
      return [
        o.metadata.name,
        age(o.metadata.creationTimestamp, now),
        keys
          .filter((k) => !k.startsWith('limits.'))
          .map(fmt)
          .join(', '),
        keys
          .filter((k) => k.startsWith('limits.'))
          .map(fmt)
          .join(', '),
      ];
    },
  },
  limitranges: {
    columns: [col('Name', 0, 'string', 'name'), col('Created At')],
    row: (o) => [o.metadata.name, String(o.metadata.creationTimestamp ?? '')],
  },
  controllerrevisions: {
    columns: [col('Name', 0, 'string', 'name'), col('Controller'), col('Revision', 0, 'integer'), col('Age')],
    row: (o, now) => {
      // upstream formatResourceName: lower-cased Kind.group, then the name.
      const ref = ((o.metadata.ownerReferences ?? []) as Obj[]).find((r) => r.controller === true);
      const group = String(ref?.apiVersion ?? '').includes('/') ? String(ref!.apiVersion).split('/')[0] : '';
      const owner = ref ? `${String(ref.kind).toLowerCase()}${group ? `.${group}` : ''}/${ref.name}` : '<none>';
      return [o.metadata.name, owner, o.revision ?? 0, age(o.metadata.creationTimestamp, now)];
    },
  },
  events: {
    columns: [
      col('Last Seen'),
      col('Type'),
      col('Reason'),
      col('Object'),
      col('Subobject', 1),
      col('Source', 1),
      col('Message'),
      col('First Seen', 1),
      col('Count', 1, 'integer'),
      col('Name', 1, 'string', 'name'),
    ],
    row: (o, now) => {
      // core/v1 and events.k8s.io/v1 names (regarding, note, deprecated*) alike.
      const io = o.involvedObject ?? o.regarding ?? {};
      const last =
        o.lastTimestamp ??
        o.deprecatedLastTimestamp ??
        o.series?.lastObservedTime ??
        o.eventTime ??
        o.metadata.creationTimestamp;
      const first = o.firstTimestamp ?? o.deprecatedFirstTimestamp ?? o.eventTime ?? o.metadata.creationTimestamp;
      const source = o.source ?? o.deprecatedSource;
      const src = source?.component
        ? `${source.component}${source.host ? `, ${source.host}` : ''}`
        : (o.reportingComponent ?? o.reportingController ?? '');
      return [
        age(last, now),
        o.type ?? '',
        o.reason ?? '',
        `${String(io.kind ?? '').toLowerCase()}/${io.name ?? ''}`,
        io.fieldPath ?? '',
        src,
        String(o.message ?? o.note ?? '').trim(),
        age(first, now),
        o.count ?? o.deprecatedCount ?? o.series?.count ?? 1,
        o.metadata.name,
      ];
    },
  },
  certificatesigningrequests: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Age'),
      col('SignerName'),
      col('Requestor'),
      col('RequestedDuration'),
      col('Condition'),
    ],
    row: (o, now) => {
      const conds = ((o.status?.conditions ?? []) as Obj[])
        .filter((c) => c.status === undefined || c.status === 'True')
        .map((c) => String(c.type));
      if (o.status?.certificate) conds.push('Issued');
      const secs = o.spec?.expirationSeconds as number | undefined;
      const dur =
        secs === undefined
          ? '<none>'
          : secs % 3600 === 0
            ? `${secs / 3600}h`
            : secs % 60 === 0
              ? `${secs / 60}m`
              : `${secs}s`;
      return [
        o.metadata.name,
        age(o.metadata.creationTimestamp, now),
        o.spec?.signerName ?? '',
        o.spec?.username ?? '',
        dur,
        conds.length ? conds.join(',') : 'Pending',
      ];
    },
  },
  jobs: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Status'),
      col('Completions'),
      col('Duration'),
      col('Age'),
      col('Containers', 1),
      col('Images', 1),
      col('Selector', 1),
    ],
    row: (o, now) => {
      const [c, i] = containersOf(o.spec?.template);
      const succeeded = o.status?.succeeded ?? 0;
      const parallelism = o.spec?.parallelism ?? 0;
      const completions =
        o.spec?.completions !== undefined && o.spec?.completions !== null
          ? `${succeeded}/${o.spec.completions}`
          : parallelism > 1
            ? `${succeeded}/1 of ${parallelism}`
            : `${succeeded}/1`;
      const start = o.status?.startTime ? Date.parse(o.status.startTime) : undefined;
      const duration =
        start === undefined
          ? ''
          : humanDuration((o.status?.completionTime ? Date.parse(o.status.completionTime) : now) - start);
      const has = (t: string): boolean =>
        ((o.status?.conditions ?? []) as Obj[]).some((x) => x.type === t && x.status === 'True');
      const status = has('Complete')
        ? 'Complete'
        : has('Failed')
          ? 'Failed'
          : o.metadata.deletionTimestamp
            ? 'Terminating'
            : has('Suspended')
              ? 'Suspended'
              : has('FailureTarget')
                ? 'FailureTarget'
                : has('SuccessCriteriaMet')
                  ? 'SuccessCriteriaMet'
                  : 'Running';
      return [
        o.metadata.name,
        status,
        completions,
        duration,
        age(o.metadata.creationTimestamp, now),
        c,
        i,
        selectorString(o.spec?.selector),
      ];
    },
  },
  cronjobs: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Schedule'),
      col('Timezone'),
      col('Suspend', 0, 'boolean'),
      col('Active', 0, 'integer'),
      col('Last Schedule'),
      col('Age'),
      col('Containers', 1),
      col('Images', 1),
      col('Selector', 1),
    ],
    row: (o, now) => {
      const [c, i] = containersOf(o.spec?.jobTemplate?.spec?.template);
      // upstream printBoolPtr: the strings True, False or <unset>.
      return [
        o.metadata.name,
        o.spec?.schedule ?? '',
        o.spec?.timeZone || '<none>',
        o.spec?.suspend === undefined ? '<unset>' : o.spec.suspend ? 'True' : 'False',
        ((o.status?.active ?? []) as Obj[]).length,
        o.status?.lastScheduleTime ? age(o.status.lastScheduleTime, now) : '<none>',
        age(o.metadata.creationTimestamp, now),
        c,
        i,
        selectorString(o.spec?.jobTemplate?.spec?.selector),
      ];
    },
  },
  poddisruptionbudgets: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Min Available'),
      col('Max Unavailable'),
      col('Allowed Disruptions', 0, 'integer'),
      col('Age'),
    ],
    row: (o, now) => [
      o.metadata.name,
      o.spec?.minAvailable !== undefined ? String(o.spec.minAvailable) : 'N/A',
      o.spec?.maxUnavailable !== undefined ? String(o.spec.maxUnavailable) : 'N/A',
      o.status?.disruptionsAllowed ?? 0,
      age(o.metadata.creationTimestamp, now),
    ],
  },
  ingresses: {
    columns: [col('Name', 0, 'string', 'name'), col('Class'), col('Hosts'), col('Address'), col('Ports'), col('Age')],
    row: (o, now) => {
      const hosts = ((o.spec?.rules ?? []) as Obj[]).map((r) => r.host).filter(Boolean) as string[];
      const lb = ((o.status?.loadBalancer?.ingress ?? []) as Obj[]).map((i) => i.ip ?? i.hostname).filter(Boolean);
      return [
        o.metadata.name,
        o.spec?.ingressClassName ?? '<none>',
        hosts.length ? hosts.join(',') : '*',
        lb.join(','),
        (o.spec?.tls ?? []).length ? '80, 443' : '80',
        age(o.metadata.creationTimestamp, now),
      ];
    },
  },
  ingressclasses: {
    columns: [col('Name', 0, 'string', 'name'), col('Controller'), col('Parameters'), col('Age')],
    row: (o, now) => {
      const p = o.spec?.parameters as Obj | undefined;
      return [
        o.metadata.name,
        o.spec?.controller ?? '',
        p ? `${p.kind}/${p.name}` : '<none>',
        age(o.metadata.creationTimestamp, now),
      ];
    },
  },
  networkpolicies: {
    columns: [col('Name', 0, 'string', 'name'), col('Pod-Selector'), col('Age')],
    row: (o, now) => [
      o.metadata.name,
      selectorString(o.spec?.podSelector) || '<none>',
      age(o.metadata.creationTimestamp, now),
    ],
  },
  priorityclasses: {
    columns: [
      col('Name', 0, 'string', 'name'),
      col('Value', 0, 'integer'),
      col('Global-Default', 0, 'boolean'),
      col('Age'),
      col('PreemptionPolicy'),
    ],
    row: (o, now) => [
      o.metadata.name,
      o.value ?? 0,
      o.globalDefault === true,
      age(o.metadata.creationTimestamp, now),
      o.preemptionPolicy ?? '',
    ],
  },
  runtimeclasses: {
    columns: [col('Name', 0, 'string', 'name'), col('Handler'), col('Age')],
    row: (o, now) => [o.metadata.name, o.handler ?? '', age(o.metadata.creationTimestamp, now)],
  },
  // No printer upstream either: the default table convertor's Name and Created At.
  customresourcedefinitions: {
    columns: [col('Name', 0, 'string', 'name'), col('Created At', 0, 'date')],
    row: (o) => [o.metadata.name, o.metadata.creationTimestamp],
  },
  namespaces: {
    columns: [col('Name', 0, 'string', 'name'), col('Status'), col('Age')],
    row: (o, now) => [o.metadata.name, o.status?.phase ?? '', age(o.metadata.creationTimestamp, now)],
  },
};

const DEFAULT: Printer = {
  columns: [col('Name', 0, 'string', 'name'), col('Age')],
  row: (o, now) => [o.metadata.name, age(o.metadata.creationTimestamp, now)],
};

export type IncludeObject = 'None' | 'Metadata' | 'Object';

function rowObject(o: Obj, include: IncludeObject): Obj | undefined {
  if (include === 'None') return undefined;
  if (include === 'Object') return o;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
}

export function toTable(
  r: ResourceDef,
  items: Obj[],
  listMeta: Obj,
  include: IncludeObject = 'Metadata',
  now = Date.now(),
): Obj {
  if (r.custom) {
    const c = customColumns(r.custom);
    return {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: listMeta,
      columnDefinitions: c.columns,
      rows: items.map((o) => ({ cells: c.row(o, now, age), object: rowObject(o, include) })),
    };
  }
  const p = PRINTERS[r.resource] ?? DEFAULT;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: p.columns,
    rows: items.map((o) => ({ cells: p.row(o, now), object: rowObject(o, include) })),
  };
}

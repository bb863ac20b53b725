// GET /metrics/cadvisor: the container_* series dashboards read (cAdvisor's
// names and labels: container, id, image, name, namespace, pod), from the
// runtime's container stats, plus machine_cpu_cores and machine_memory_bytes.
import os from 'node:os';

import type { Container, ContainerStats } from '../cri/types.js';
import { L_CONTAINER_NAME, L_POD_NAME, L_POD_NAMESPACE } from '../pods/labels.js';

const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

const FAMILIES: Record<string, [string, string]> = {
  container_cpu_usage_seconds_total: ['Cumulative cpu time consumed in seconds.', 'counter'],
  container_memory_working_set_bytes: ['Current working set in bytes.', 'gauge'],
  container_memory_usage_bytes: [
    'Current memory usage in bytes, including all memory regardless of when it was accessed',
    'gauge',
  ],
  container_memory_rss: ['Size of RSS in bytes.', 'gauge'],
  container_fs_usage_bytes: ['Number of bytes that are consumed by the container on this filesystem.', 'gauge'],
  container_start_time_seconds: ['Start time of the container since unix epoch in seconds.', 'gauge'],
  container_last_seen: ['Last time a container was seen by the exporter', 'gauge'],
  machine_cpu_cores: ['Number of logical CPU cores.', 'gauge'],
  machine_memory_bytes: ['Amount of memory installed on the machine.', 'gauge'],
};

/** `cgroupOf`: a container's cgroup path (its pod cgroup's, then its id), for the id label. */
export function cadvisorMetrics(
  stats: ContainerStats[],
  containers: Container[],
  cgroupOf: (podUid: string, containerId: string) => string,
  imageName: (ref: string) => string = (r) => r,
  now = Date.now(),
): string {
  const lines = new Map<string, string[]>();
  const put = (name: string, l: Record<string, string>, v: number | undefined, ts?: number): void => {
    if (v === undefined || Number.isNaN(v)) return;
    const lbl = Object.entries(l)
      .map(([k, x]) => `${k}="${esc(x)}"`)
      .join(',');
    (lines.get(name) ?? lines.set(name, []).get(name)!).push(
      `${name}${lbl ? `{${lbl}}` : ''} ${v}${ts ? ` ${ts}` : ''}`,
    );
  };
  const byId = new Map(containers.map((c) => [c.id, c]));
  const num = (v: { value: string } | null | undefined): number | undefined => (v ? Number(v.value) : undefined);
  for (const s of stats) {
    const id = s.attributes?.id ?? '';
    const c = byId.get(id);
    const labels = s.attributes?.labels ?? {};
    const l = {
      container: labels[L_CONTAINER_NAME] ?? '',
      id: cgroupOf(labels['io.kubernetes.pod.uid'] ?? '', id),
      image: imageName(c?.image?.image ?? ''),
      name: id,
      namespace: labels[L_POD_NAMESPACE] ?? '',
      pod: labels[L_POD_NAME] ?? '',
    };
    const ts = (x: string | number | undefined): number | undefined => (x ? Math.floor(Number(x) / 1e6) : undefined);
    const cpu = num(s.cpu?.usage_core_nano_seconds);
    put(
      'container_cpu_usage_seconds_total',
      { ...l, cpu: 'total' },
      cpu === undefined ? undefined : cpu / 1e9,
      ts(s.cpu?.timestamp),
    );
    put('container_memory_working_set_bytes', l, num(s.memory?.working_set_bytes), ts(s.memory?.timestamp));
    put('container_memory_usage_bytes', l, num(s.memory?.usage_bytes), ts(s.memory?.timestamp));
    put('container_memory_rss', l, num(s.memory?.rss_bytes), ts(s.memory?.timestamp));
    put(
      'container_fs_usage_bytes',
      { ...l, device: s.writable_layer?.fs_id?.mountpoint ?? '' },
      num(s.writable_layer?.used_bytes),
      ts(s.writable_layer?.timestamp),
    );
    if (c?.created_at) put('container_start_time_seconds', l, Math.floor(Number(c.created_at) / 1e9));
    put('container_last_seen', l, Math.floor(now / 1000));
  }
  put('machine_cpu_cores', {}, os.cpus().length);
  put('machine_memory_bytes', {}, os.totalmem());
  return [...lines]
    .map(
      ([name, ls]) => `# HELP ${name} ${FAMILIES[name]![0]}\n# TYPE ${name} ${FAMILIES[name]![1]}\n${ls.join('\n')}\n`,
    )
    .join('');
}

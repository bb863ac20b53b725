// The manifest fuzz's inputs: bad or odd static pod files. Every
// field of a working pod gets values of the wrong type, out of range, empty,
// huge or malicious; whole files come broken (YAML bombs, binary, size,
// nesting). `valid` marks the odd ones a kubelet must run anyway.
import { APP_IMAGE } from './harness.js';

export interface FuzzCase {
  file: string;
  content: string | Buffer;
  /** Odd but a valid pod: it must run (and go when the file goes). Others may run or be refused, never both. */
  valid?: boolean;
  /** No document at all: an empty set, neither a pod nor an error. */
  empty?: boolean;
}

type Obj = Record<string, any>;

const base = (name: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { fuzz: 'yes' } },
  spec: {
    terminationGracePeriodSeconds: 1,
    volumes: [{ name: 'scratch', emptyDir: {} }],
    containers: [
      {
        name: 'c',
        image: APP_IMAGE,
        command: ['sleep', '3600'],
        volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
        ports: [{ containerPort: 8080 }],
        resources: { requests: { cpu: '10m' } },
      },
    ],
  },
});

function setPath(o: Obj, p: string, v: unknown): Obj {
  const parts = p.split('.');
  let cur: any = o;
  for (const k of parts.slice(0, -1)) {
    const key = /^\d+$/.test(k) ? Number(k) : k;
    cur[key] ??= {};
    cur = cur[key];
  }
  const last = parts[parts.length - 1]!;
  cur[/^\d+$/.test(last) ? Number(last) : last] = v;
  return o;
}

/** Field paths of the base pod (and a few it lacks), each given values of the wrong kind. */
const PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'metadata.labels',
  'metadata.annotations',
  'spec',
  'spec.containers',
  'spec.containers.0',
  'spec.containers.0.name',
  'spec.containers.0.image',
  'spec.containers.0.command',
  'spec.containers.0.args',
  'spec.containers.0.env',
  'spec.containers.0.ports',
  'spec.containers.0.ports.0.containerPort',
  'spec.containers.0.ports.0.hostPort',
  'spec.containers.0.ports.0.protocol',
  'spec.containers.0.resources',
  'spec.containers.0.resources.requests.cpu',
  'spec.containers.0.volumeMounts',
  'spec.containers.0.volumeMounts.0.mountPath',
  'spec.containers.0.securityContext',
  'spec.containers.0.securityContext.runAsUser',
  'spec.containers.0.livenessProbe',
  'spec.containers.0.imagePullPolicy',
  'spec.volumes',
  'spec.volumes.0.emptyDir',
  'spec.restartPolicy',
  'spec.terminationGracePeriodSeconds',
  'spec.activeDeadlineSeconds',
  'spec.hostNetwork',
  'spec.tolerations',
  'spec.dnsPolicy',
  'spec.initContainers',
];

const WRONG: [string, unknown][] = [
  ['num', 5],
  ['neg', -1],
  ['str', 'x'],
  ['list', [1, 'two', null]],
  ['obj', { nested: { deep: true } }],
];

export function fuzzCases(): FuzzCase[] {
  const cases: FuzzCase[] = [];
  const json = (file: string, o: Obj, valid = false): void =>
    void cases.push({ file, content: JSON.stringify(o), valid });
  // 1. Wrong kinds of values, field by field.
  PATHS.forEach((p, i) => {
    for (const [tag, v] of WRONG) {
      const name = `f${i}-${tag}`;
      json(`${name}.json`, setPath(base(name), p, v));
    }
  });
  // 2. Values upstream's validation refuses, each on its own.
  const semantic: [string, (o: Obj) => void][] = [
    ['name-too-long', (o) => (o.metadata.name = 'n'.repeat(250))],
    ['uid-path', (o) => (o.metadata.uid = '../../../etc')],
    ['uid-number', (o) => (o.metadata.uid = 12345)],
    ['label-key', (o) => (o.metadata.labels = { 'bad key!': 'v' })],
    ['label-value', (o) => (o.metadata.labels = { k: 'v'.repeat(70) })],
    ['annotations-huge', (o) => (o.metadata.annotations = { big: 'a'.repeat(300 * 1024) })],
    ['deadline-neg', (o) => (o.spec.activeDeadlineSeconds = -1)],
    ['env-name', (o) => (o.spec.containers[0].env = [{ name: '1BAD=', value: 'x' }])],
    ['mount-undeclared', (o) => (o.spec.containers[0].volumeMounts = [{ name: 'nope', mountPath: '/x' }])],
    ['cpu-neg', (o) => (o.spec.containers[0].resources = { requests: { cpu: '-1' } })],
    ['mem-garbage', (o) => (o.spec.containers[0].resources = { limits: { memory: '12XB' } })],
    ['req-over-limit', (o) => (o.spec.containers[0].resources = { requests: { cpu: '2' }, limits: { cpu: '1' } })],
    ['runasuser-root', (o) => (o.spec.containers[0].securityContext = { runAsUser: 'root' })],
    [
      'hostport-dup',
      (o) =>
        (o.spec.containers[0].ports = [
          { containerPort: 80, hostPort: 18081 },
          { containerPort: 81, hostPort: 18081 },
        ]),
    ],
    ['exec-string', (o) => (o.spec.containers[0].livenessProbe = { exec: { command: 'true' } })],
    [
      'probe-two-handlers',
      (o) => (o.spec.containers[0].livenessProbe = { exec: { command: ['true'] }, tcpSocket: { port: 80 } }),
    ],
    ['tolerations-number', (o) => (o.spec.tolerations = 5)],
    ['restart-policy', (o) => (o.spec.restartPolicy = 'Sometimes')],
    ['dns-policy', (o) => (o.spec.dnsPolicy = 'Google')],
    ['dns-none-empty', (o) => (o.spec.dnsPolicy = 'None')],
    ['dns-bad-ns', (o) => (o.spec.dnsConfig = { nameservers: ['dns.example'] })],
    ['sidecar-never', (o) => (o.spec.initContainers = [{ name: 'i', image: APP_IMAGE, restartPolicy: 'Never' }])],
    [
      'init-probe',
      (o) =>
        (o.spec.initContainers = [{ name: 'i', image: APP_IMAGE, readinessProbe: { exec: { command: ['true'] } } }]),
    ],
    ['dup-container', (o) => o.spec.containers.push({ name: 'c', image: APP_IMAGE })],
    ['no-containers', (o) => (o.spec.containers = [])],
    ['empty-image', (o) => (o.spec.containers[0].image = ' ')],
    ['hostpath-relative', (o) => (o.spec.volumes = [{ name: 'scratch', hostPath: { path: 'relative/dir' } }])],
    ['hostpath-dotdot', (o) => (o.spec.volumes = [{ name: 'scratch', hostPath: { path: '/tmp/../etc' } }])],
    [
      'subpath-escape',
      (o) => (o.spec.containers[0].volumeMounts = [{ name: 'scratch', mountPath: '/x', subPath: '../../etc' }]),
    ],
    [
      'subpath-absolute',
      (o) => (o.spec.containers[0].volumeMounts = [{ name: 'scratch', mountPath: '/x', subPath: '/etc' }]),
    ],
    ['secret-volume', (o) => (o.spec.volumes = [{ name: 'scratch', secret: { secretName: 's' } }])],
    [
      'configmap-env',
      (o) => (o.spec.containers[0].env = [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }]),
    ],
    ['serviceaccount', (o) => (o.spec.serviceAccountName = 'default')],
    ['two-volume-types', (o) => (o.spec.volumes = [{ name: 'scratch', emptyDir: {}, hostPath: { path: '/tmp' } }])],
    ['port-range', (o) => (o.spec.containers[0].ports = [{ containerPort: 70000 }])],
    ['protocol', (o) => (o.spec.containers[0].ports = [{ containerPort: 80, protocol: 'HTTP' }])],
    ['pull-policy', (o) => (o.spec.containers[0].imagePullPolicy = 'Sometimes')],
    ['sysctl-name', (o) => (o.spec.securityContext = { sysctls: [{ name: 5, value: 1 }] })],
    ['volume-name', (o) => (o.spec.volumes = [{ name: 'Bad_Name', emptyDir: {} }])],
    ['container-name', (o) => (o.spec.containers[0].name = 'Bad_Name')],
    ['namespace-name', (o) => (o.metadata.namespace = 'Bad_NS')],
    ['grace-neg', (o) => (o.spec.terminationGracePeriodSeconds = -5)],
  ];
  for (const [tag, f] of semantic) {
    const o = base(`s-${tag}`);
    f(o);
    json(`s-${tag}.json`, o);
  }
  // 3. Odd but valid: these must run.
  const odd: [string, (o: Obj) => void][] = [
    // Honoured as given: the container leaves on SIGTERM, or the kubelet would (rightly) wait that long.
    [
      'grace-huge',
      (o) => (
        (o.spec.terminationGracePeriodSeconds = 1_000_000_000_000),
        (o.spec.containers[0].command = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'])
      ),
    ],
    ['long-arg', (o) => (o.spec.containers[0].args = ['x'.repeat(200 * 1024)])],
    ['unicode-label-value', (o) => (o.metadata.annotations = { note: 'ünïcödé ✓' })],
    ['deadline-huge', (o) => (o.spec.activeDeadlineSeconds = 2147483647)],
  ];
  for (const [tag, f] of odd) {
    const o = base(`o-${tag}`);
    f(o);
    if (tag === 'long-arg') o.spec.containers[0].command = ['sh', '-c', 'exec sleep 3600', 'sh'];
    json(`o-${tag}.json`, o, true);
  }
  // 4. Broken files.
  const text: [string, string | Buffer][] = [
    ['empty.yaml', ''],
    ['null.yaml', 'null\n'],
    ['number.yaml', '42\n'],
    ['list.yaml', '- a\n- b\n'],
    ['unclosed.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: x\n'],
    ['tabs.yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n\tname: tabs\n'],
    [
      'alias-bomb.yaml',
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nkind: Pod\n',
    ],
    ['alias-self.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: &m {name: selfref, labels: *m}\n'],
    ['deep.json', `${'['.repeat(5000)}${']'.repeat(5000)}`],
    ['binary.yaml', Buffer.from([0x00, 0xff, 0xfe, 0x01, 0x80, 0x81])],
    ['huge.yaml', Buffer.alloc(4 * 1024 * 1024, 'a')],
    ['kind-service.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: svc}\n'],
    ['version.yaml', 'apiVersion: v2\nkind: Pod\nmetadata: {name: v2}\n'],
    ['podlist-bad.yaml', 'apiVersion: v1\nkind: PodList\nitems: 5\n'],
    [
      'multi-doc.yaml',
      `apiVersion: v1\nkind: Pod\nmetadata: {name: multi-a}\nspec: {containers: [{name: c, image: ${APP_IMAGE}}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: multi-b}\n`,
    ],
    ['json-trailing.json', '{"apiVersion":"v1","kind":"Pod"} {"x":1}'],
    [
      'bom.yaml',
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from('apiVersion: v1\nkind: Pod\nmetadata: {name: bom}\nspec: {containers: 7}\n'),
      ]),
    ],
    ['dupkeys.yaml', 'apiVersion: v1\nkind: Pod\nkind: Pod\nmetadata: {name: dupkeys}\n'],
  ];
  for (const [file, content] of text)
    cases.push({ file, content, empty: file === 'empty.yaml' || file === 'null.yaml' });
  return cases;
}

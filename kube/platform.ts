import os from 'node:os';

/** Node's process.arch in Go's GOARCH spelling, as Kubernetes labels and images use it. */
export function goArch(arch: string = process.arch): string {
  return arch === 'x64' ? 'amd64' : arch === 'ia32' ? '386' : arch;
}

/** The first non-loopback IPv4 address: the default node IP. */
export function firstIPv4(): string {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '127.0.0.1';
}

/** Node's process.arch in Go's GOARCH spelling, as Kubernetes labels and images use it. */
export function goArch(arch: string = process.arch): string {
  return arch === 'x64' ? 'amd64' : arch === 'ia32' ? '386' : arch;
}

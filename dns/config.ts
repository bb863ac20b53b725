// The cluster DNS server's configuration; cli/dns-config.ts parses the flags into it.

export interface DnsConfig {
  kubeconfig: string;
  clusterDomain: string;
  dnsAddress: string;
  healthAddress: string;
  readyAddress: string;
  metricsAddress: string;
  upstreams: string[];
  resolvConf: string;
  ttl: number;
  /** Where clients reach this server; when set, it keeps kube-system/kube-dns's endpoints pointing here. */
  publishAddress: string;
  nodeName: string;
  verbosity: number;
  /** Client ranges answered besides loopback and this host's addresses (the pod and Service ranges). */
  allowFrom: string[];
}

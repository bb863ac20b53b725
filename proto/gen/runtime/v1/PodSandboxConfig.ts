// Original file: proto/cri/api.proto

import type {
  DNSConfig as _runtime_v1_DNSConfig,
  DNSConfig__Output as _runtime_v1_DNSConfig__Output,
} from '../../runtime/v1/DNSConfig.js';
import type {
  LinuxPodSandboxConfig as _runtime_v1_LinuxPodSandboxConfig,
  LinuxPodSandboxConfig__Output as _runtime_v1_LinuxPodSandboxConfig__Output,
} from '../../runtime/v1/LinuxPodSandboxConfig.js';
import type {
  PodSandboxMetadata as _runtime_v1_PodSandboxMetadata,
  PodSandboxMetadata__Output as _runtime_v1_PodSandboxMetadata__Output,
} from '../../runtime/v1/PodSandboxMetadata.js';
import type {
  PortMapping as _runtime_v1_PortMapping,
  PortMapping__Output as _runtime_v1_PortMapping__Output,
} from '../../runtime/v1/PortMapping.js';

export interface PodSandboxConfig {
  metadata?: _runtime_v1_PodSandboxMetadata | null;
  hostname?: string;
  log_directory?: string;
  dns_config?: _runtime_v1_DNSConfig | null;
  port_mappings?: _runtime_v1_PortMapping[];
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  linux?: _runtime_v1_LinuxPodSandboxConfig | null;
}

export interface PodSandboxConfig__Output {
  metadata: _runtime_v1_PodSandboxMetadata__Output | null;
  hostname: string;
  log_directory: string;
  dns_config: _runtime_v1_DNSConfig__Output | null;
  port_mappings: _runtime_v1_PortMapping__Output[];
  labels: { [key: string]: string };
  annotations: { [key: string]: string };
  linux: _runtime_v1_LinuxPodSandboxConfig__Output | null;
}

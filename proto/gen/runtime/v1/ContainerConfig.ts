// Original file: proto/cri/api.proto

import type {
  ContainerMetadata as _runtime_v1_ContainerMetadata,
  ContainerMetadata__Output as _runtime_v1_ContainerMetadata__Output,
} from '../../runtime/v1/ContainerMetadata.js';
import type {
  Device as _runtime_v1_Device,
  Device__Output as _runtime_v1_Device__Output,
} from '../../runtime/v1/Device.js';
import type {
  ImageSpec as _runtime_v1_ImageSpec,
  ImageSpec__Output as _runtime_v1_ImageSpec__Output,
} from '../../runtime/v1/ImageSpec.js';
import type {
  KeyValue as _runtime_v1_KeyValue,
  KeyValue__Output as _runtime_v1_KeyValue__Output,
} from '../../runtime/v1/KeyValue.js';
import type {
  LinuxContainerConfig as _runtime_v1_LinuxContainerConfig,
  LinuxContainerConfig__Output as _runtime_v1_LinuxContainerConfig__Output,
} from '../../runtime/v1/LinuxContainerConfig.js';
import type { Mount as _runtime_v1_Mount, Mount__Output as _runtime_v1_Mount__Output } from '../../runtime/v1/Mount.js';

export interface ContainerConfig {
  metadata?: _runtime_v1_ContainerMetadata | null;
  image?: _runtime_v1_ImageSpec | null;
  command?: string[];
  args?: string[];
  working_dir?: string;
  envs?: _runtime_v1_KeyValue[];
  mounts?: _runtime_v1_Mount[];
  devices?: _runtime_v1_Device[];
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  log_path?: string;
  stdin?: boolean;
  stdin_once?: boolean;
  tty?: boolean;
  linux?: _runtime_v1_LinuxContainerConfig | null;
}

export interface ContainerConfig__Output {
  metadata: _runtime_v1_ContainerMetadata__Output | null;
  image: _runtime_v1_ImageSpec__Output | null;
  command: string[];
  args: string[];
  working_dir: string;
  envs: _runtime_v1_KeyValue__Output[];
  mounts: _runtime_v1_Mount__Output[];
  devices: _runtime_v1_Device__Output[];
  labels: { [key: string]: string };
  annotations: { [key: string]: string };
  log_path: string;
  stdin: boolean;
  stdin_once: boolean;
  tty: boolean;
  linux: _runtime_v1_LinuxContainerConfig__Output | null;
}

// Original file: proto/cri/api.proto

import type {
  ContainerAttributes as _runtime_v1_ContainerAttributes,
  ContainerAttributes__Output as _runtime_v1_ContainerAttributes__Output,
} from '../../runtime/v1/ContainerAttributes.js';
import type {
  CpuUsage as _runtime_v1_CpuUsage,
  CpuUsage__Output as _runtime_v1_CpuUsage__Output,
} from '../../runtime/v1/CpuUsage.js';
import type {
  FilesystemUsage as _runtime_v1_FilesystemUsage,
  FilesystemUsage__Output as _runtime_v1_FilesystemUsage__Output,
} from '../../runtime/v1/FilesystemUsage.js';
import type {
  MemoryUsage as _runtime_v1_MemoryUsage,
  MemoryUsage__Output as _runtime_v1_MemoryUsage__Output,
} from '../../runtime/v1/MemoryUsage.js';

export interface ContainerStats {
  attributes?: _runtime_v1_ContainerAttributes | null;
  cpu?: _runtime_v1_CpuUsage | null;
  memory?: _runtime_v1_MemoryUsage | null;
  writable_layer?: _runtime_v1_FilesystemUsage | null;
}

export interface ContainerStats__Output {
  attributes: _runtime_v1_ContainerAttributes__Output | null;
  cpu: _runtime_v1_CpuUsage__Output | null;
  memory: _runtime_v1_MemoryUsage__Output | null;
  writable_layer: _runtime_v1_FilesystemUsage__Output | null;
}

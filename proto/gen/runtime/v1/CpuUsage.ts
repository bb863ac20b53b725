// Original file: proto/cri/api.proto

import type { Long } from '@grpc/proto-loader';

import type {
  UInt64Value as _runtime_v1_UInt64Value,
  UInt64Value__Output as _runtime_v1_UInt64Value__Output,
} from '../../runtime/v1/UInt64Value.js';

export interface CpuUsage {
  timestamp?: number | string | Long;
  usage_core_nano_seconds?: _runtime_v1_UInt64Value | null;
  usage_nano_cores?: _runtime_v1_UInt64Value | null;
}

export interface CpuUsage__Output {
  timestamp: string;
  usage_core_nano_seconds: _runtime_v1_UInt64Value__Output | null;
  usage_nano_cores: _runtime_v1_UInt64Value__Output | null;
}

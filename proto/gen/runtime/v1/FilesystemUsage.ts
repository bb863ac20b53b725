// Original file: proto/cri/api.proto

import type { Long } from '@grpc/proto-loader';

import type {
  FilesystemIdentifier as _runtime_v1_FilesystemIdentifier,
  FilesystemIdentifier__Output as _runtime_v1_FilesystemIdentifier__Output,
} from '../../runtime/v1/FilesystemIdentifier.js';
import type {
  UInt64Value as _runtime_v1_UInt64Value,
  UInt64Value__Output as _runtime_v1_UInt64Value__Output,
} from '../../runtime/v1/UInt64Value.js';

export interface FilesystemUsage {
  timestamp?: number | string | Long;
  fs_id?: _runtime_v1_FilesystemIdentifier | null;
  used_bytes?: _runtime_v1_UInt64Value | null;
  inodes_used?: _runtime_v1_UInt64Value | null;
}

export interface FilesystemUsage__Output {
  timestamp: string;
  fs_id: _runtime_v1_FilesystemIdentifier__Output | null;
  used_bytes: _runtime_v1_UInt64Value__Output | null;
  inodes_used: _runtime_v1_UInt64Value__Output | null;
}

// Original file: proto/cri/api.proto

import type {
  PodSandboxState as _runtime_v1_PodSandboxState,
  PodSandboxState__Output as _runtime_v1_PodSandboxState__Output,
} from '../../runtime/v1/PodSandboxState.js';

export interface PodSandboxStateValue {
  state?: _runtime_v1_PodSandboxState;
}

export interface PodSandboxStateValue__Output {
  state: _runtime_v1_PodSandboxState__Output;
}

// Original file: proto/cri/api.proto

import type {
  Protocol as _runtime_v1_Protocol,
  Protocol__Output as _runtime_v1_Protocol__Output,
} from '../../runtime/v1/Protocol.js';

export interface PortMapping {
  protocol?: _runtime_v1_Protocol;
  container_port?: number;
  host_port?: number;
  host_ip?: string;
}

export interface PortMapping__Output {
  protocol: _runtime_v1_Protocol__Output;
  container_port: number;
  host_port: number;
  host_ip: string;
}

// Original file: proto/cri/api.proto

export interface Capability {
  add_capabilities?: string[];
  drop_capabilities?: string[];
  add_ambient_capabilities?: string[];
}

export interface Capability__Output {
  add_capabilities: string[];
  drop_capabilities: string[];
  add_ambient_capabilities: string[];
}

// Original file: proto/cri/api.proto

export interface RemovePodSandboxResponse {}

export interface RemovePodSandboxResponse__Output {}

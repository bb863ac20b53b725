// Original file: proto/cri/api.proto

export interface StopPodSandboxResponse {}

export interface StopPodSandboxResponse__Output {}

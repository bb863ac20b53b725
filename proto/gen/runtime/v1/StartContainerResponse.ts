// Original file: proto/cri/api.proto

export interface StartContainerResponse {}

export interface StartContainerResponse__Output {}

// Original file: proto/cri/api.proto

export interface ReopenContainerLogResponse {}

export interface ReopenContainerLogResponse__Output {}

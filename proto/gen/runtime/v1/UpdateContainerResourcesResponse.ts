// Original file: proto/cri/api.proto

export interface UpdateContainerResourcesResponse {}

export interface UpdateContainerResourcesResponse__Output {}

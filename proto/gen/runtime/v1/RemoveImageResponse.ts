// Original file: proto/cri/api.proto

export interface RemoveImageResponse {}

export interface RemoveImageResponse__Output {}

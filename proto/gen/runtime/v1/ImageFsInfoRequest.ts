// Original file: proto/cri/api.proto

export interface ImageFsInfoRequest {}

export interface ImageFsInfoRequest__Output {}

// Original file: proto/cri/api.proto

export interface VersionRequest {
  version?: string;
}

export interface VersionRequest__Output {
  version: string;
}

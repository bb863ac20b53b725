// Original file: proto/cri/api.proto

export interface AttachResponse {
  url?: string;
}

export interface AttachResponse__Output {
  url: string;
}

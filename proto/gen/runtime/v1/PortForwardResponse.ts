// Original file: proto/cri/api.proto

export interface PortForwardResponse {
  url?: string;
}

export interface PortForwardResponse__Output {
  url: string;
}

// Original file: proto/cri/api.proto

export interface ExecResponse {
  url?: string;
}

export interface ExecResponse__Output {
  url: string;
}

// Original file: proto/cri/api.proto

export interface ExecSyncResponse {
  stdout?: Buffer | Uint8Array | string;
  stderr?: Buffer | Uint8Array | string;
  exit_code?: number;
}

export interface ExecSyncResponse__Output {
  stdout: Buffer;
  stderr: Buffer;
  exit_code: number;
}

// Original file: proto/cri/api.proto

export interface PodSandboxStatusRequest {
  pod_sandbox_id?: string;
  verbose?: boolean;
}

export interface PodSandboxStatusRequest__Output {
  pod_sandbox_id: string;
  verbose: boolean;
}

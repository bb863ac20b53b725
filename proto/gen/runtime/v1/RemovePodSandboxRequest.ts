// Original file: proto/cri/api.proto

export interface RemovePodSandboxRequest {
  pod_sandbox_id?: string;
}

export interface RemovePodSandboxRequest__Output {
  pod_sandbox_id: string;
}

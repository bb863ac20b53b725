// Original file: proto/cri/api.proto

export interface StopPodSandboxRequest {
  pod_sandbox_id?: string;
}

export interface StopPodSandboxRequest__Output {
  pod_sandbox_id: string;
}

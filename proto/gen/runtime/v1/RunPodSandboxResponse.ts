// Original file: proto/cri/api.proto

export interface RunPodSandboxResponse {
  pod_sandbox_id?: string;
}

export interface RunPodSandboxResponse__Output {
  pod_sandbox_id: string;
}

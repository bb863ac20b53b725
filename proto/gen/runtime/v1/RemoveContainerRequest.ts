// Original file: proto/cri/api.proto

export interface RemoveContainerRequest {
  container_id?: string;
}

export interface RemoveContainerRequest__Output {
  container_id: string;
}

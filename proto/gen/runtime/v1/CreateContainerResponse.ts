// Original file: proto/cri/api.proto

export interface CreateContainerResponse {
  container_id?: string;
}

export interface CreateContainerResponse__Output {
  container_id: string;
}

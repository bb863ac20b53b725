// Original file: proto/cri/api.proto

export interface ReopenContainerLogRequest {
  container_id?: string;
}

export interface ReopenContainerLogRequest__Output {
  container_id: string;
}

// Original file: proto/cri/api.proto

export interface IDMapping {
  host_id?: number;
  container_id?: number;
  length?: number;
}

export interface IDMapping__Output {
  host_id: number;
  container_id: number;
  length: number;
}

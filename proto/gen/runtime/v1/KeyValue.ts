// Original file: proto/cri/api.proto

export interface KeyValue {
  key?: string;
  value?: string;
}

export interface KeyValue__Output {
  key: string;
  value: string;
}

// Original file: proto/cri/api.proto

export interface RuntimeCondition {
  type?: string;
  status?: boolean;
  reason?: string;
  message?: string;
}

export interface RuntimeCondition__Output {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

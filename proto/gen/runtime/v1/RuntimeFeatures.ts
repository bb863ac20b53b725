// Original file: proto/cri/api.proto

export interface RuntimeFeatures {
  supplemental_groups_policy?: boolean;
}

export interface RuntimeFeatures__Output {
  supplemental_groups_policy: boolean;
}

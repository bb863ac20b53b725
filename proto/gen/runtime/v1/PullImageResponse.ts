// Original file: proto/cri/api.proto

export interface PullImageResponse {
  image_ref?: string;
}

export interface PullImageResponse__Output {
  image_ref: string;
}

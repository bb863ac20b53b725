// Original file: proto/cri/api.proto

import type { Image as _runtime_v1_Image, Image__Output as _runtime_v1_Image__Output } from '../../runtime/v1/Image.js';

export interface ImageStatusResponse {
  image?: _runtime_v1_Image | null;
  info?: { [key: string]: string };
}

export interface ImageStatusResponse__Output {
  image: _runtime_v1_Image__Output | null;
  info: { [key: string]: string };
}

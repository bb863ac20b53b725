// Original file: proto/cri/api.proto

export const ContainerState = {
  CONTAINER_CREATED: 'CONTAINER_CREATED',
  CONTAINER_RUNNING: 'CONTAINER_RUNNING',
  CONTAINER_EXITED: 'CONTAINER_EXITED',
  CONTAINER_UNKNOWN: 'CONTAINER_UNKNOWN',
} as const;

export type ContainerState =
  'CONTAINER_CREATED' | 0 | 'CONTAINER_RUNNING' | 1 | 'CONTAINER_EXITED' | 2 | 'CONTAINER_UNKNOWN' | 3;

export type ContainerState__Output = (typeof ContainerState)[keyof typeof ContainerState];

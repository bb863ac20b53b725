// Original file: proto/cri/api.proto

export const Protocol = {
  TCP: 'TCP',
  UDP: 'UDP',
  SCTP: 'SCTP',
} as const;

export type Protocol = 'TCP' | 0 | 'UDP' | 1 | 'SCTP' | 2;

export type Protocol__Output = (typeof Protocol)[keyof typeof Protocol];

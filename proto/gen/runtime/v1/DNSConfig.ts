// Original file: proto/cri/api.proto

export interface DNSConfig {
  servers?: string[];
  searches?: string[];
  options?: string[];
}

export interface DNSConfig__Output {
  servers: string[];
  searches: string[];
  options: string[];
}

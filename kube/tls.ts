// TLS settings of the servers we run (apiserver :6443, kubelet :10250): Go's
// default cipher suites, which kube-apiserver and the kubelet use unless told
// otherwise: forward secrecy only (ECDHE), AEAD suites first, TLS 1.2 at least.
export const GO_DEFAULT_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-SHA',
  'ECDHE-RSA-AES128-SHA',
  'ECDHE-ECDSA-AES256-SHA',
  'ECDHE-RSA-AES256-SHA',
].join(':');

export const SERVER_TLS = { ciphers: GO_DEFAULT_CIPHERS, honorCipherOrder: true, minVersion: 'TLSv1.2' as const };

// The prom-client files kube/prom.ts imports one by one (the package types only its index).
declare module 'prom-client/lib/registry.js' {
  const value: unknown;
  export default value;
}
declare module 'prom-client/lib/counter.js' {
  const value: unknown;
  export default value;
}
declare module 'prom-client/lib/gauge.js' {
  const value: unknown;
  export default value;
}
declare module 'prom-client/lib/histogram.js' {
  const value: unknown;
  export default value;
}
declare module 'prom-client/lib/defaultMetrics.js' {
  const value: unknown;
  export default value;
}
declare module 'prom-client/lib/bucketGenerators.js' {
  const value: unknown;
  export default value;
}

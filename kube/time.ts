// Timestamps in the formats the Kubernetes API uses.

/** metav1.Time: RFC 3339 with whole seconds. */
export const rfc3339 = (d: Date = new Date()): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** metav1.MicroTime: RFC 3339 with microseconds (JS has milliseconds, so the last three are 0). */
export const microTime = (d: Date = new Date()): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** Go's RFC3339Nano, which trims trailing zeros of the fraction (annotations such as config.seen). */
export const rfc3339Nano = (d: Date = new Date()): string =>
  d
    .toISOString()
    .replace(/\.?0+Z$/, 'Z')
    .replace('.Z', 'Z');

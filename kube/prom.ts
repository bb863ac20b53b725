// prom-client's metric classes, each from its own file: the package's index
// also loads its Pushgateway (http, https, zlib) and AggregatorRegistry
// (cluster), which no tskube process uses, at a cost in RSS and start time
// (kube/prom-client-lib.d.ts types these paths as the package's own).
import type * as P from 'prom-client';
import buckets from 'prom-client/lib/bucketGenerators.js';
import CounterClass from 'prom-client/lib/counter.js';
import collectDefault from 'prom-client/lib/defaultMetrics.js';
import GaugeClass from 'prom-client/lib/gauge.js';
import HistogramClass from 'prom-client/lib/histogram.js';
import RegistryClass from 'prom-client/lib/registry.js';

export const Registry = RegistryClass as typeof P.Registry;
export type Registry = P.Registry;
export const Counter = CounterClass as typeof P.Counter;
export type Counter<T extends string = string> = P.Counter<T>;
export const Gauge = GaugeClass as typeof P.Gauge;
export type Gauge<T extends string = string> = P.Gauge<T>;
export const Histogram = HistogramClass as typeof P.Histogram;
export type Histogram<T extends string = string> = P.Histogram<T>;
export const collectDefaultMetrics = collectDefault as typeof P.collectDefaultMetrics;
export const exponentialBuckets = (buckets as { exponentialBuckets: typeof P.exponentialBuckets }).exponentialBuckets;

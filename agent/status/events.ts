// Event recording. For now events go to the log (and to listeners, for
// tests and later the apiserver); reasons and texts follow upstream.
import type { Logger } from '../log.js';

export interface ObjectRef {
  kind: 'Pod' | 'Node';
  namespace?: string;
  name: string;
  uid?: string;
  fieldPath?: string;
}

export interface KubeEvent {
  ref: ObjectRef;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  at: Date;
}

export interface EventRecorder {
  event(ref: ObjectRef, type: KubeEvent['type'], reason: string, message: string): void;
}

export class LogEventRecorder implements EventRecorder {
  private readonly listeners = new Set<(e: KubeEvent) => void>();
  constructor(private readonly log: Logger) {}
  event(ref: ObjectRef, type: KubeEvent['type'], reason: string, message: string): void {
    const e: KubeEvent = { ref, type, reason, message, at: new Date() };
    const obj = `${ref.kind.toLowerCase()}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
    (type === 'Warning' ? this.log.warn : this.log.info)(`event ${type} ${reason} ${obj}: ${message}`);
    for (const l of this.listeners) l(e);
  }
  onEvent(fn: (e: KubeEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

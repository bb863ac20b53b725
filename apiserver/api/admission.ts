// Admission: plugins that see every write with the requesting user, after
// defaulting and before storage, and may refuse it (as kube-apiserver's
// validating admission chain).
import type { ResourceDef } from '../resources.js';
import type { Obj } from '../storage/store.js';

export interface User {
  name: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface Attributes {
  user: User;
  operation: Operation;
  resource: ResourceDef;
  subresource: string;
  namespace: string;
  name: string;
  /** The object as it would be stored (CREATE, UPDATE), or the request body of a subresource. */
  object?: Obj;
  /** The stored object (UPDATE, DELETE). */
  oldObject?: Obj;
  /** Adds a warning to the response (a `Warning: 299` header), as upstream's warning.AddWarning. */
  warn?: (message: string) => void;
  /** Records an audit annotation of this request. */
  annotate?: (key: string, value: string) => void;
}

export type GetObject = (group: string, resource: string, namespace: string, name: string) => Obj | undefined;
export type ListObjects = (group: string, resource: string, namespace: string) => Obj[];

export interface AdmissionPlugin {
  readonly name: string;
  /** Throws an ApiError to refuse. `get` and `list` read current objects (e.g. the Node for a uid check). */
  admit(a: Attributes, get: GetObject, list: ListObjects): void;
}

/** Internal writers (controllers, bootstrap) that bypass identity checks. */
export const SYSTEM_USER: User = { name: 'system:apiserver', groups: ['system:masters'] };

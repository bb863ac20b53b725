// grpc-js client classes for the services of a .proto file (gRPC probes,
// the CRI test double), what @grpc/proto-loader + loadPackageDefinition give
// minus the descriptor protos proto-loader builds for every type (for server
// reflection, which nothing here uses).
import * as grpc from '@grpc/grpc-js';

import { loadServices, type ProtoMethod } from './proto-methods.js';

export interface GrpcPackage {
  [name: string]: GrpcPackage | grpc.ServiceClientConstructor;
}

function methodDefinition(m: ProtoMethod): grpc.MethodDefinition<object, object> {
  return {
    path: m.path,
    requestStream: m.requestStream,
    responseStream: m.responseStream,
    requestSerialize: m.serialize,
    requestDeserialize: m.deserializeRequest,
    responseSerialize: m.serializeResponse,
    responseDeserialize: m.deserialize,
    // proto-loader's camelCase alias; clients get both names.
    originalName: m.name[0]!.toLowerCase() + m.name.slice(1),
  };
}

/** Parses `file` (imports resolved under `includeDir`) into nested packages of client classes, e.g. `pkg.runtime.v1.RuntimeService`. */
export function loadGrpcPackage(file: string, includeDir: string): GrpcPackage {
  const out: GrpcPackage = {};
  for (const [full, methods] of loadServices(file, includeDir)) {
    const parts = full.split('.');
    const name = parts.pop()!;
    let into = out;
    for (const p of parts) into = (into[p] ??= {}) as GrpcPackage;
    const def = Object.fromEntries([...methods].map(([k, m]) => [k, methodDefinition(m)])) as grpc.ServiceDefinition;
    into[name] = grpc.makeGenericClientConstructor(def, name);
  }
  return out;
}

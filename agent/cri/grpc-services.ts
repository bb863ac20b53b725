// gRPC client classes straight from a .proto file with protobufjs, what
// @grpc/proto-loader + loadPackageDefinition give minus the descriptor
// protos proto-loader builds for every type (for server reflection, which
// nothing here uses): that conversion was two thirds of loading the CRI API
// (~25 ms of the kubelet's start). Messages convert as proto-loader's
// serializers do, with the options the generated types in proto/gen assume.
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

/** keepCase is a parse option; these are proto-loader's conversion options (--longs=String --enums=String --defaults --oneofs). */
export const CONVERSION: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

export interface GrpcPackage {
  [name: string]: GrpcPackage | grpc.ServiceClientConstructor;
}

function methodDefinition(service: protobuf.Service, method: protobuf.Method): grpc.MethodDefinition<object, object> {
  const req = method.resolvedRequestType!;
  const res = method.resolvedResponseType!;
  const serialize = (t: protobuf.Type) => (o: object): Buffer => Buffer.from(t.encode(t.fromObject(o)).finish());
  const deserialize = (t: protobuf.Type) => (b: Buffer): object => t.toObject(t.decode(b), CONVERSION);
  return {
    path: `/${service.fullName.slice(1)}/${method.name}`,
    requestStream: !!method.requestStream,
    responseStream: !!method.responseStream,
    requestSerialize: serialize(req),
    requestDeserialize: deserialize(req),
    responseSerialize: serialize(res),
    responseDeserialize: deserialize(res),
    // proto-loader's camelCase alias; clients get both names.
    originalName: method.name[0]!.toLowerCase() + method.name.slice(1),
  };
}

/** Parses `file` (imports resolved under `includeDir`, field names as written) into nested packages of client classes, e.g. `pkg.runtime.v1.RuntimeService`. */
export function loadGrpcPackage(file: string, includeDir: string): GrpcPackage {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(includeDir, target));
  root.loadSync(file, { keepCase: true });
  root.resolveAll();
  const out: GrpcPackage = {};
  const walk = (ns: protobuf.NamespaceBase, into: GrpcPackage): void => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Service) {
        const def = Object.fromEntries(child.methodsArray.map((m) => [m.name, methodDefinition(child, m)])) as grpc.ServiceDefinition;
        into[child.name] = grpc.makeGenericClientConstructor(def, child.name);
      } else if (child instanceof protobuf.Namespace && !(child instanceof protobuf.Type)) {
        walk(child, (into[child.name] ??= {}) as GrpcPackage);
      }
    }
  };
  walk(root, out);
  return out;
}

// The methods of the gRPC services in a .proto file, parsed with protobufjs:
// each method's path and its message (de)serializers. Messages convert as
// @grpc/proto-loader's serializers do (the options proto/gen assumes:
// message-codec.ts), so the CRI client needs no gRPC library to build them. A .json file is
// protobufjs's descriptor of a .proto (`npm run gen:proto`): read in a third
// of the time the .proto text takes to parse, on the kubelet's start path.
import fs from 'node:fs';
import path from 'node:path';

import protobuf from 'protobufjs';

import { messageCodec } from './message-codec.js';

export interface ProtoMethod {
  /** `/package.Service/Method`, the HTTP/2 :path of a call. */
  path: string;
  name: string;
  requestStream: boolean;
  responseStream: boolean;
  serialize: (o: object) => Buffer;
  deserialize: (b: Buffer) => object;
  /** The response type's (de)serializers, for servers (test doubles). */
  serializeResponse: (o: object) => Buffer;
  deserializeRequest: (b: Buffer) => object;
}

/** Parses a .proto file, its imports resolved under `includeDir`, field names as written. */
export function parseProto(file: string, includeDir: string): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(includeDir, target));
  root.loadSync(file, { keepCase: true });
  return root;
}

/** Every service of `file` (a .proto, or its .json descriptor), by full name (`runtime.v1.RuntimeService`), each method by name. */
export function loadServices(file: string, includeDir: string): Map<string, Map<string, ProtoMethod>> {
  const root = file.endsWith('.json')
    ? protobuf.Root.fromJSON(JSON.parse(fs.readFileSync(path.join(includeDir, file), 'utf8')) as protobuf.INamespace)
    : parseProto(file, includeDir);
  root.resolveAll();
  const out = new Map<string, Map<string, ProtoMethod>>();
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Service) {
        const full = child.fullName.slice(1);
        const methods = new Map<string, ProtoMethod>();
        for (const m of child.methodsArray) {
          const req = messageCodec(m.resolvedRequestType!);
          const res = messageCodec(m.resolvedResponseType!);
          methods.set(m.name, {
            path: `/${full}/${m.name}`,
            name: m.name,
            requestStream: !!m.requestStream,
            responseStream: !!m.responseStream,
            serialize: req.encode,
            deserialize: res.decode,
            serializeResponse: res.encode,
            deserializeRequest: req.decode,
          });
        }
        out.set(full, methods);
      } else if (child instanceof protobuf.Namespace && !(child instanceof protobuf.Type)) {
        walk(child);
      }
    }
  };
  walk(root);
  return out;
}

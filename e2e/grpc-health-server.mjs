// A grpc.health.v1 server for e2e: `node grpc-health-server.mjs PORT`; it
// answers SERVING until it gets SIGUSR1, then NOT_SERVING (SIGUSR1 toggles).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '../proto');
const def = protoLoader.loadSync('grpc/health/v1/health.proto', {
  keepCase: true,
  enums: String,
  defaults: true,
  includeDirs: [dir],
});
const pkg = grpc.loadPackageDefinition(def);
let status = 'SERVING';
process.on('SIGUSR1', () => (status = status === 'SERVING' ? 'NOT_SERVING' : 'SERVING'));
const server = new grpc.Server();
server.addService(pkg.grpc.health.v1.Health.service, { Check: (_call, cb) => cb(null, { status }) });
server.bindAsync(`0.0.0.0:${process.argv[2]}`, grpc.ServerCredentials.createInsecure(), (e) => {
  if (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
  process.stdout.write('listening\n');
});

// Writes proto/cri/api.json, protobufjs's descriptor of proto/cri/api.proto,
// which the kubelet reads at start instead of parsing the .proto (part of `npm run gen:proto`).
import fs from 'node:fs';
import path from 'node:path';

import { parseProto } from '../agent/cri/proto-methods.js';

const dir = path.resolve(import.meta.dirname, '../proto');
fs.writeFileSync(
  path.join(dir, 'cri/api.json'),
  `${JSON.stringify(parseProto('cri/api.proto', dir).toJSON(), null, 1)}\n`,
);

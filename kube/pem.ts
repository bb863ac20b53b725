// PEM (RFC 7468) blocks: what Go's encoding/pem decodes and encodes. Text around and between blocks is skipped;
// a block whose body is not base64 ends the decoding, as pem.Decode stops at it.

export interface PemBlock {
  type: string;
  bytes: Buffer;
}

const BEGIN = '-----BEGIN ';
const END = '-----END ';
const DASHES = '-----';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Every PEM block in `text`, in order. */
export function decodePem(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line.startsWith(BEGIN) || !line.endsWith(DASHES)) continue;
    const type = line.slice(BEGIN.length, -DASHES.length);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j]!.trim() !== `${END}${type}${DASHES}`; j++) body.push(lines[j]!.trim());
    if (j === lines.length) break; // no END line: not a block
    const b64 = body.join('');
    if (!BASE64.test(b64)) break;
    out.push({ type, bytes: Buffer.from(b64, 'base64') });
    i = j;
  }
  return out;
}

/** One block as Go's pem.EncodeToMemory writes it: base64 in 64-character lines. */
export function encodePem(block: PemBlock): string {
  const b64 = block.bytes.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `${BEGIN}${block.type}${DASHES}\n${lines.map((l) => `${l}\n`).join('')}${END}${block.type}${DASHES}\n`;
}

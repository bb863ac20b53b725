// The persistent log's records, read from its bytes: one JSON record per line. A crash mid-append (or a full disk)
// can leave only the end torn: that tail is reported so the store can cut it away before appending again. A bad
// record anywhere else is corruption and refuses the start.

export interface LogRecord {
  t: 'put' | 'del';
  k: string;
  rv: number;
  o?: Record<string, unknown>;
}

export interface ReadLog {
  records: { record: LogRecord; bytes: number }[];
  /** Bytes up to the end of the last whole record: where the file must end. */
  goodBytes: number;
  /** What follows it (a torn record), if anything. */
  torn?: Buffer;
}

export function readLog(buf: Buffer, file: string): ReadLog {
  const records: ReadLog['records'] = [];
  let start = 0;
  let line = 0;
  while (start < buf.length) {
    const end = buf.indexOf(0x0a, start);
    // No newline: the last append never finished.
    if (end < 0) return { records, goodBytes: start, torn: buf.subarray(start) };
    line++;
    const text = buf.toString('utf8', start, end);
    if (text) {
      let record: LogRecord;
      try {
        record = JSON.parse(text) as LogRecord;
        if ((record.t !== 'put' && record.t !== 'del') || typeof record.k !== 'string' || typeof record.rv !== 'number')
          throw new Error('not a record');
      } catch {
        // A whole line that does not parse is only tolerated at the very end.
        if (end + 1 >= buf.length) return { records, goodBytes: start, torn: buf.subarray(start) };
        throw new Error(`${file}: line ${line} is corrupt`);
      }
      records.push({ record, bytes: end + 1 - start });
    }
    start = end + 1;
  }
  return { records, goodBytes: buf.length };
}

// Transactions over an nf_tables netlink socket when every line is one the
// encoder knows (what partial syncs send), else through `nft -f -`. One batch
// is one atomic transaction, as with nft; it succeeds when the kernel has
// acknowledged every command, and fails with the first error it reports.
import os from 'node:os';
import { ExecNft, NftError, type Nft } from './apply.js';
import type { Listing } from './diff.js';
import { encodeTransaction, numberBatch, parseAcks } from './netlink-encode.js';

const NETLINK_NETFILTER = 12;
/** Larger transactions (full syncs) go through nft, which splits its batches itself. */
const MAX_BATCH_BYTES = 256 << 10;
/** No answer from the kernel in this long: the socket is given up and nft used from then on. */
const REPLY_TIMEOUT_MS = 5000;

interface RawSocket {
  send(msg: Uint8Array[], options?: object, callback?: (error?: Error) => void): void;
  on(event: 'message', listener: (msg: Buffer) => void): void;
  on(event: 'error', listener: (e: Error) => void): void;
  address(): { port: number };
  close(): void;
  unref(): void;
  setRecvBufferSize(size: number): void;
  setSendBufferSize(size: number): void;
}

interface Pending {
  waiting: Set<number>;
  error?: { seq: number; errno: number };
  done: (e?: Error) => void;
  timer: NodeJS.Timeout;
}

const errnoName = (n: number): string => Object.entries(os.constants.errno).find(([, v]) => v === n)?.[0] ?? `errno ${n}`;

export class NetlinkNft implements Nft {
  /** Transactions sent over netlink, and those that went to nft. */
  readonly counts = { netlink: 0, nft: 0 };
  private seq = Math.floor(Math.random() * 0x7fffffff);
  private pending?: Pending;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private sock: RawSocket | undefined,
    private readonly fallback: Nft,
  ) {
    sock?.on('message', (m) => this.onMessage(m));
    sock?.on('error', (e) => this.pending?.done(new NftError(`netlink: ${e.message}`)));
  }

  /** Opens the socket; without the native module or the socket, every transaction goes to nft (reason given). */
  static async open(fallback: Nft = new ExecNft('ip')): Promise<{ nft: NetlinkNft; unavailable?: string }> {
    try {
      const { RawNetlinkSocket } = (await import('netlink')) as unknown as { RawNetlinkSocket: new (protocol: number) => RawSocket };
      const sock = new RawNetlinkSocket(NETLINK_NETFILTER);
      sock.setRecvBufferSize(1 << 20);
      sock.setSendBufferSize(1 << 20);
      sock.unref();
      return { nft: new NetlinkNft(sock, fallback) };
    } catch (e) {
      return { nft: new NetlinkNft(undefined, fallback), unavailable: (e as Error).message };
    }
  }

  list(): Promise<Listing> {
    return this.fallback.list();
  }

  run(text: string): Promise<void> {
    const batch = this.sock && text.length <= MAX_BATCH_BYTES ? encodeTransaction(text) : undefined;
    if (!batch) return this.viaNft(text);
    // One batch in flight at a time: the acks of two would interleave.
    const p = this.queue.then(() => this.send(batch, text));
    this.queue = p.catch(() => {});
    return p;
  }

  private viaNft(text: string): Promise<void> {
    this.counts.nft++;
    return this.fallback.run(text);
  }

  close(): void {
    this.sock?.close();
    this.sock = undefined;
  }

  private send(batch: Buffer[], text: string): Promise<void> {
    const sock = this.sock;
    if (!sock) return this.viaNft(text);
    this.counts.netlink++;
    const seqs = numberBatch(batch, this.seq, sock.address().port);
    this.seq = (this.seq + batch.length) & 0x7fffffff;
    const commands = seqs.slice(1, -1);
    return new Promise<void>((resolve, reject) => {
      const lines = text.split('\n').filter((l) => l !== '');
      const pending: Pending = {
        waiting: new Set(commands),
        done: (e) => {
          clearTimeout(pending.timer);
          if (this.pending === pending) this.pending = undefined;
          if (e) reject(e);
          else if (pending.error) {
            const line = lines[commands.indexOf(pending.error.seq)] ?? '';
            reject(new NftError(`netlink transaction failed: ${errnoName(pending.error.errno)} at: ${line}`));
          } else resolve();
        },
        timer: setTimeout(() => {
          // Whether the kernel applied it is unknown: the caller's next sync is a full one, and nft's from now on.
          this.close();
          pending.done(new NftError(`netlink: no answer from the kernel in ${REPLY_TIMEOUT_MS} ms`));
        }, REPLY_TIMEOUT_MS),
      };
      this.pending = pending;
      sock.send(batch, {}, (e) => e && pending.done(new NftError(`netlink send: ${e.message}`)));
    });
  }

  private onMessage(m: Buffer): void {
    const p = this.pending;
    if (!p) return;
    for (const { seq, errno } of parseAcks(m)) {
      if (!p.waiting.delete(seq)) continue;
      if (errno !== 0 && !p.error) p.error = { seq, errno };
    }
    // The kernel goes through the whole batch and answers every command, failed or not, before it aborts.
    if (p.waiting.size === 0) p.done();
  }
}

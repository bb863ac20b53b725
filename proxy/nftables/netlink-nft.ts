// Transactions over an nf_tables netlink socket when every line is one the
// encoder knows (what partial syncs send), else through `nft -f -`. One batch
// is one atomic transaction, as with nft; it succeeds when the kernel has
// acknowledged every command, and fails with the first error it reports.
// A full sync's listing comes from the kernel's dumps too, with a digest of
// each chain's rules, so a restart leaves the chains the kernel has alone.
import os from 'node:os';

import { ExecNft, type Nft, NftError } from './apply.js';
import type { Listing } from './diff.js';
import { digests, foldRule, type RuleHasher } from './netlink-digest.js';
import {
  type EncodedTransaction,
  encodeTransaction,
  messagesOf,
  type NftFamily,
  numberBatch,
  parseAcks,
} from './netlink-encode.js';
import { LISTED_SETS, listingOfDumps, listingRequests, slotBlockOfRule } from './netlink-listing.js';

const NETLINK_NETFILTER = 12;
/** Larger transactions (full syncs) go through nft, which splits its batches itself (text and batch bytes). */
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

/** Transactions and their acks on one socket, requests and their answers (dumps) on the other. */
interface Sockets {
  batch: RawSocket;
  dump: RawSocket;
}

/** A request in flight: the messages answering it, until NLMSG_DONE (dump) or the ack or error. */
interface Exchange {
  seq: number;
  msgs: Buffer[];
  /** The messages, or the errno the kernel answered with (-1: no answer, or a dump interrupted by a change). */
  done: (r: Buffer[] | number) => void;
}

interface Pending {
  waiting: Set<number>;
  error?: { seq: number; errno: number };
  done: (e?: Error) => void;
  timer: NodeJS.Timeout;
}

const errnoName = (n: number): string =>
  Object.entries(os.constants.errno).find(([, v]) => v === n)?.[0] ?? `errno ${n}`;

export class NetlinkNft implements Nft {
  /** Transactions sent over netlink, and those that went to nft. */
  readonly counts = { netlink: 0, nft: 0 };
  private seq = Math.floor(Math.random() * 0x7fffffff);
  private pending?: Pending;
  private exchange?: Exchange;
  private queue: Promise<unknown> = Promise.resolve();

  private readonly requests: ReturnType<typeof listingRequests>;

  private constructor(
    private socks: Sockets | undefined,
    private readonly fallback: Nft,
    private readonly family: NftFamily,
  ) {
    this.requests = listingRequests(family);
    socks?.batch.on('message', (m) => this.onAcks(m));
    socks?.dump.on('message', (m) => this.onAnswer(m));
    const onError = (e: Error): void => {
      this.pending?.done(new NftError(`netlink: ${e.message}`));
      this.exchange?.done(-1);
    };
    socks?.batch.on('error', onError);
    socks?.dump.on('error', onError);
  }

  /** Opens the sockets; without the native module or a socket, every transaction goes to nft (reason given). */
  static async open(
    fallback: Nft = new ExecNft('ip'),
    family: NftFamily = 'ip',
  ): Promise<{ nft: NetlinkNft; unavailable?: string }> {
    const opened: RawSocket[] = [];
    try {
      const { RawNetlinkSocket } = (await import('netlink')) as unknown as {
        RawNetlinkSocket: new (protocol: number, o: object) => RawSocket;
      };
      const socket = (o: object): RawSocket => {
        const sock = new RawNetlinkSocket(NETLINK_NETFILTER, o);
        opened.push(sock);
        sock.setRecvBufferSize(1 << 20);
        sock.setSendBufferSize(1 << 20);
        sock.unref();
        return sock;
      };
      // Dumps are read into 64 KiB buffers, not a peeked exact size: the kernel sizes dump datagrams by the largest
      // read (up to 32 KiB), and resumes a dump by walking the set from the start for each one. Acks are read at
      // their exact size: the binding allocates the whole buffer for every datagram, and a full sync's hundreds of
      // thousands of acks in 64 KiB buffers (which the garbage collector does not see) held hundreds of MiB.
      const dump = socket({ messagePeeking: false, msgBufferSize: 64 << 10 });
      const batch = socket({ messagePeeking: true });
      return { nft: new NetlinkNft({ batch, dump }, fallback, family) };
    } catch (e) {
      for (const sock of opened) sock.close();
      return { nft: new NetlinkNft(undefined, fallback, family), unavailable: (e as Error).message };
    }
  }

  /**
   * The table as the kernel's dumps give it, with the digest of every service chain's rules; nft's listing (which
   * reads every rule of the ruleset first) only without the socket or when a dump fails.
   */
  async list(): Promise<Listing> {
    const p = this.queue.then(() => this.dumpListing());
    this.queue = p.catch(() => {});
    return (await p) ?? this.fallback.list();
  }

  private async dumpListing(): Promise<Listing | undefined> {
    if (!this.socks) return undefined;
    const table = await this.ask(this.requests.table());
    if (table === 2 /* ENOENT */) return listingOfDumps(false, [], [], new Map());
    if (typeof table === 'number') return undefined;
    const chains = await this.ask(this.requests.chains());
    const sets = await this.ask(this.requests.sets());
    if (typeof chains === 'number' || typeof sets === 'number') return undefined;
    const elements = new Map<string, Buffer[]>();
    for (const set of LISTED_SETS) {
      const els = await this.ask(this.requests.elements(set));
      if (els === 2) continue; // not made yet (an older layout): no elements
      if (typeof els === 'number') return undefined;
      elements.set(set, els);
    }
    const listing = listingOfDumps(true, chains, sets, elements, this.family);
    if (!listing) return undefined;
    const acc = new Map<string, RuleHasher>();
    const blocks = new Map<string, number>();
    for (const c of listing.chains) {
      const rules = await this.ask(this.requests.rules(c));
      if (typeof rules === 'number') return listing; // no digests: every chain is rewritten
      for (const m of rules) {
        foldRule(m, acc);
        const b = slotBlockOfRule(m);
        if (b) blocks.set(b[0], b[1]);
      }
    }
    listing.digests = digests(acc);
    listing.slotBlocks = blocks;
    return listing;
  }

  /** Sends one request and collects its answer. */
  private ask(req: Buffer): Promise<Buffer[] | number> {
    const sock = this.socks?.dump;
    if (!sock) return Promise.resolve(-1);
    return new Promise((resolve) => {
      const seq = this.seq;
      this.seq = (this.seq + 1) & 0x7fffffff;
      req.writeUInt32LE(seq, 8);
      const timer = setTimeout(() => this.exchange?.done(-1), REPLY_TIMEOUT_MS);
      this.exchange = {
        seq,
        msgs: [],
        done: (r) => {
          clearTimeout(timer);
          this.exchange = undefined;
          resolve(r);
        },
      };
      sock.send([req], {}, (e) => e && this.exchange?.done(-1));
    });
  }

  run(text: string): Promise<void> {
    const enc = this.socks && text.length <= MAX_BATCH_BYTES ? encodeTransaction(text, this.family) : undefined;
    // One batch is one datagram, which the socket's send buffer (net.core.wmem_max, doubled) must hold.
    if (!enc || enc.batch.reduce((n, b) => n + b.length, 0) > MAX_BATCH_BYTES) return this.viaNft(text);
    // One batch in flight at a time: the acks of two would interleave.
    const p = this.queue.then(() => this.send(enc, text));
    this.queue = p.catch(() => {});
    return p;
  }

  private viaNft(text: string): Promise<void> {
    this.counts.nft++;
    return this.fallback.run(text);
  }

  close(): void {
    this.socks?.batch.close();
    this.socks?.dump.close();
    this.socks = undefined;
  }

  private send({ batch, firstLine }: EncodedTransaction, text: string): Promise<void> {
    const sock = this.socks?.batch;
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
            const line = lines[firstLine[commands.indexOf(pending.error.seq)] ?? -1] ?? '';
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

  /** A datagram answering a request (a dump, or the table's lookup). */
  private onAnswer(m: Buffer): void {
    const x = this.exchange;
    if (x && m.length >= 16 && m.readUInt32LE(8) === x.seq) {
      for (const msg of messagesOf(m)) {
        const type = msg.readUInt16LE(4);
        if (msg.readUInt16LE(6) & 0x10) return x.done(-1); // NLM_F_DUMP_INTR: the ruleset changed meanwhile
        if (type === 3) return x.done(x.msgs); // NLMSG_DONE
        if (type === 2) {
          const errno = -msg.readInt32LE(16) | 0;
          return x.done(errno === 0 ? x.msgs : errno);
        }
        x.msgs.push(Buffer.from(msg));
      }
    }
  }

  /** A datagram of acks for the batch in flight. */
  private onAcks(m: Buffer): void {
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

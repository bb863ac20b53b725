// Closing a server must not wait on its clients: server.close() waits for every connection to end, and
// closeAllConnections() only knows HTTP ones, not those handed to an 'upgrade' handler (exec, attach,
// port-forward, watches over WebSocket), which can stay open for hours.
import type net from 'node:net';

/** Tracks the server's connections; the returned function stops listening and ends every one of them. */
export function closer(server: net.Server): () => Promise<void> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
}

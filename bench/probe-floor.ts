// bench/probes, the floor: the same probes as the kubelets make (an HTTP GET of
// each pod's path and a TCP connect to each pod's port, once a second each),
// from a bare script with nothing else to do. Runs until killed.
//   probe-floor.ts <host> <port0> <n>
import http from 'node:http';
import net from 'node:net';

const [host, port0Arg, nArg] = process.argv.slice(2) as [string, string, string];
const PORT0 = Number(port0Arg);
const N = Number(nArg);

for (let i = 0; i < N; i++) {
  // Spread over the second, as the kubelets' probe workers start at different times.
  setTimeout(
    () => {
      setInterval(() => {
        http
          .get({ host, port: PORT0, path: `/${i}`, agent: false }, (res) => res.resume())
          .on('error', () => undefined);
        const s = net.connect(PORT0 + 1 + i, host, () => s.end());
        s.on('error', () => undefined);
      }, 1000);
    },
    (1000 * i) / N,
  );
}

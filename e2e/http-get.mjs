// Tiny HTTP GET for use inside a namespace: prints the body, exits 1 on failure.
import http from 'node:http';
const [url, timeout = '3000'] = process.argv.slice(2);
const req = http.get(url, { timeout: Number(timeout) }, (res) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (d) => (body += d));
  res.on('end', () => {
    process.stdout.write(body);
    process.exit(res.statusCode && res.statusCode < 400 ? 0 : 1);
  });
});
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', (e) => {
  process.stderr.write(String(e.message) + '\n');
  process.exit(1);
});

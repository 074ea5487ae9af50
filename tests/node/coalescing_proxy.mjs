// A TCP proxy that coalesces: it holds each chunk from the server until the next one arrives
// and forwards the two together (the last one at the end of the response). The latency test
// runs its structural check through it, to show that the check fails for a path that merges
// tokens. Usage: node coalescing_proxy.mjs UPSTREAM_PORT; prints the port it listens on.
import net from 'node:net';

const upstreamPort = Number(process.argv[2]);
const server = net.createServer((client) => {
  const upstream = net.connect(upstreamPort, '127.0.0.1');
  let held = null;
  client.on('data', (d) => upstream.write(d));
  client.on('end', () => upstream.end());
  client.on('error', () => upstream.destroy());
  upstream.on('data', (d) => {
    if (held === null) {
      held = d;
      return;
    }
    client.write(Buffer.concat([held, d]));
    held = null;
  });
  upstream.on('end', () => {
    if (held !== null) client.write(held);
    client.end();
  });
  upstream.on('error', () => client.destroy());
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));

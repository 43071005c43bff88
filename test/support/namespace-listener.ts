// Runs inside a network namespace (listen-in-namespace.ts starts it): listens
// on <address>:<port> there and carries each connection over the unix socket
// <path>, which the host side forwards on. A unix socket is reachable from
// both sides; TCP is not. Prints "listening" once bound; ends when its stdin
// closes (the starter stopped or died: nsenter passes no signals on).
import { connect } from 'node:net';
import { forwardTo } from './socket-forward.js';

const [address, port, path] = process.argv.slice(2);
if (address === undefined || port === undefined || path === undefined) {
  process.stderr.write('usage: namespace-listener <address> <port> <unix socket>\n');
  process.exit(2);
}
const server = forwardTo(() => connect(path));
server.on('error', (error) => {
  process.stderr.write(`namespace-listener: ${String(error)}\n`);
  process.exit(1);
});
server.listen(Number(port), address, () => process.stdout.write('listening\n'));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

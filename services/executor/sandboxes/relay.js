// The container side of HEMRA's model relay (see relay.py).
//
//   node relay.js '<listeners as JSON>' <ready file>
//
// Each listener {address, port, socket, optional} is a TCP server on a loopback
// address of the container's own network namespace; every connection to it is
// piped, byte for byte and both ways, to the executor's Unix socket `socket`, which
// forwards it to the real endpoint. Once every listener listens, the ready file is
// written; a listener that cannot listen (and is not optional) is reported on stderr
// and ends the relay. Nothing is written after that: nobody reads this process's output.
"use strict";

const fs = require("fs");
const net = require("net");

const listeners = JSON.parse(process.argv[2]);
const readyFile = process.argv[3];
let pending = listeners.length;

function relay(client, socketPath) {
  const upstream = net.connect({ path: socketPath, allowHalfOpen: true });
  // One side ending its writes ends the other's (half-close), so request/response
  // protocols that shut down their sending side keep working.
  client.pipe(upstream);
  upstream.pipe(client);
  const both = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", both);
  upstream.on("error", both);
  client.on("close", both);
  upstream.on("close", both);
}

function listening() {
  pending -= 1;
  if (pending === 0) {
    fs.writeFileSync(readyFile, "ready\n");
  }
}

for (const { address, port, socket, optional } of listeners) {
  const server = net.createServer({ allowHalfOpen: true }, (client) => relay(client, socket));
  server.on("error", (err) => {
    if (optional) {
      listening();
      return;
    }
    process.stderr.write(`relay cannot listen on ${address}:${port}: ${err.message}\n`);
    process.exit(1);
  });
  server.listen({ host: address, port }, listening);
}

// nodehello: the Node.js setup of the benchmark, Node's `http` and `cluster` modules only.
//
// It answers every request exactly as src/gohello does, byte for byte but the Date value:
// the same header names in the same order and case (Connection: keep-alive,
// Content-Length, Content-Type: text/plain, Server: gophr, Date) and the body
// "Hello World\n", so `curl -sI` gives the same 141-byte block and a GET the same 153
// bytes. Node's own additions are switched off: its Date (`sendDate = false`, ours is
// written in Go's place), its `Keep-Alive: timeout=5` (not sent when the handler sets
// Connection itself; the idle timeout is off, as in Go) and chunking (Content-Length set).
//
// It binds 127.0.0.1, or the one address --address names (for a load generator on another
// machine; never every interface). With --workers N (N >= 2) the primary forks N `cluster`
// workers sharing the port (the study's "all CPUs" mode); otherwise one process serves.
// SIGINT or SIGTERM stops every worker and exits 0; a worker that dies on its own stops
// the rest and exits 1. "nodehello: ... ready" goes to stderr once every worker listens.
//
// Usage:
//
//   node server.js --port 8087 [--workers 2] [--body-bytes 12] [--handler-delay 1ms] [--address 10.0.0.2]
'use strict';

const cluster = require('node:cluster');
const http = require('node:http');
const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const HELLO_LINE = 'Hello World\n';
const MAX_BODY_BYTES = 1 << 20; // as gohello's -body-bytes
const MAX_WORKERS = 9999;
const USAGE = `Usage: node server.js [--port N] [--workers N] [--body-bytes N] [--handler-delay DUR] [--address IP]

Serve gohello's response (Server: gophr, Connection: keep-alive, Content-Type: text/plain,
Content-Length, Date; body "Hello World\\n") on 127.0.0.1:PORT with Node's http module.
  --port N            TCP port on --address (default 8087; 0: any free port)
  --address IP        the one IP address to listen on (default 127.0.0.1; never 0.0.0.0)
  --workers N         N >= 2: a cluster of N worker processes; 1 (default): one process
  --body-bytes N      body size, repeated "Hello World\\n" (default 12, at most 1048576)
  --handler-delay D   wait D before answering (Go syntax: 1ms, 500us, 1.5s; rounded up to 1ms)
Options may also be written with one dash (-body-bytes), as gohello's.
Exit status: 0 stopped by SIGINT/SIGTERM or --help; 1 serving failed; 2 bad arguments.`;

const DURATION_UNITS_MS = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };

/** Return a Go-style duration ("1ms", "500us", "1m30s", "0") in milliseconds; throw if not one. */
function parseDuration(text) {
  if (text === '0') return 0;
  const part = /([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const match = part.exec(text);
    if (!match) throw new Error(`-handler-delay ${JSON.stringify(text)} is not a duration like 1ms or 500us`);
    total += Number(match[1]) * DURATION_UNITS_MS[match[2]];
    at = part.lastIndex;
  }
  if (text === '') throw new Error('-handler-delay is empty');
  return total;
}

/** Return an integer option value in [lo, hi]; throw naming the option otherwise. */
function parseInteger(name, text, lo, hi) {
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) < lo || Number(text) > hi) {
    throw new Error(`-${name} ${JSON.stringify(text)} out of range ${lo}-${hi}`);
  }
  return Number(text);
}

/** Return one unicast IP address; throw for a name, 0.0.0.0 or :: (every interface). */
function parseAddress(text) {
  if (!net.isIP(text) || ['0.0.0.0', '::', '0:0:0:0:0:0:0:0'].includes(text)) {
    throw new Error(`-address ${JSON.stringify(text)} is not one IP address (never 0.0.0.0 or ::)`);
  }
  return text;
}

/** Return the settings of the command line; throw an Error with a one-line message when wrong. */
function parseArgs(argv) {
  const cfg = { port: 8087, workers: 1, bodyBytes: HELLO_LINE.length, delayMs: 0, address: LOOPBACK, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help' || arg === '-help') {
      cfg.help = true;
      continue;
    }
    const match = /^--?(port|workers|body-bytes|handler-delay|address)(?:=(.*))?$/.exec(arg);
    if (!match) throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    let value = match[2];
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new Error(`-${match[1]} needs a value`);
      value = argv[++i];
    }
    if (match[1] === 'port') cfg.port = parseInteger('port', value, 0, 65535);
    else if (match[1] === 'workers') cfg.workers = parseInteger('workers', value, 1, MAX_WORKERS);
    else if (match[1] === 'body-bytes') cfg.bodyBytes = parseInteger('body-bytes', value, 1, MAX_BODY_BYTES);
    else if (match[1] === 'address') cfg.address = parseAddress(value);
    else cfg.delayMs = parseDuration(value);
  }
  return cfg;
}

/** Return n bytes of repeated "Hello World\n": exactly that line when n is 12. */
function makeBody(n) {
  return Buffer.from(HELLO_LINE.repeat(Math.floor(n / HELLO_LINE.length) + 1).slice(0, n), 'latin1');
}

let cachedSecond = -1;
let cachedDate = '';

/** Return the HTTP date of now ("Mon, 23 Nov 2026 10:15:06 GMT", Go's http.TimeFormat), cached per second. */
function httpDate() {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedDate = new Date(second * 1000).toUTCString();
  }
  return cachedDate;
}

/** Return true when Go's net/http keeps the connection of req open: HTTP/1.1 unless
 * `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`. */
function keepsAlive(req) {
  const tokens = String(req.headers.connection || '').toLowerCase().split(',').map((t) => t.trim());
  if (req.httpVersion === '1.0') return tokens.includes('keep-alive');
  return !tokens.includes('close');
}

/** Return the header list Go sends: its map sorted by name, then Date; Connection only when kept alive. */
function goHeaders(length, keepAlive) {
  const headers = ['Content-Length', length, 'Content-Type', 'text/plain', 'Server', 'gophr', 'Date', httpDate()];
  return keepAlive ? ['Connection', 'keep-alive', ...headers] : headers;
}

/** Make Node's stored header block say what Go says to an HTTP/1.0 request.
 *
 * Go answers in the request's version (`HTTP/1.0 200 OK`) and, closing a 1.0 connection,
 * sends no Connection header; Node always writes HTTP/1.1 and adds `Connection: close`
 * (itself, at the end, exactly as Go does for HTTP/1.1). Node keeps the block in
 * `res._header` between writeHead and end; it is edited there, and left alone (so a test
 * fails) if a Node version stores it otherwise.
 */
function asHttp10(res, keepAlive) {
  if (typeof res._header !== 'string' || !res._header.startsWith('HTTP/1.1 ')) return;
  let block = 'HTTP/1.0 ' + res._header.slice('HTTP/1.1 '.length);
  if (!keepAlive) block = block.replace('\r\nConnection: close\r\n', '\r\n');
  res._header = block;
}

/** Return the request handler: gohello's headers, in Go's order and case, and the body. */
function makeHandler(cfg) {
  const body = makeBody(cfg.bodyBytes);
  const length = String(body.length);
  const answer = (req, res) => {
    const keepAlive = keepsAlive(req);
    res.sendDate = false; // our own Date is in the header list, where Go puts it
    // Without our Connection header Node adds `Connection: close` last and closes, as Go does.
    res.writeHead(200, goHeaders(length, keepAlive));
    if (req.httpVersion === '1.0') asHttp10(res, keepAlive);
    res.end(body); // Node drops the body of a HEAD response itself
  };
  if (cfg.delayMs > 0) return (req, res) => setTimeout(answer, cfg.delayMs, req, res);
  return answer;
}

/** Start one HTTP server on address:port; call ready(address) once it listens. */
function serve(cfg, ready) {
  const server = http.createServer(makeHandler(cfg));
  server.keepAliveTimeout = 0; // no idle timeout (as Go's default) and no Keep-Alive header
  server.on('error', (err) => {
    process.stderr.write(`nodehello: listen ${cfg.address}:${cfg.port}: ${err.message}\n`);
    process.exit(1);
  });
  server.listen(cfg.port, cfg.address, () => ready(server.address()));
  return server;
}

/** Run the cluster's primary: fork the workers, say ready once all listen, stop them on a signal. */
function runPrimary(cfg) {
  let listening = 0;
  let stopping = false;
  cluster.on('listening', (worker, address) => {
    listening += 1;
    if (listening === cfg.workers) {
      process.stderr.write(
        `nodehello: workers=${cfg.workers} http=${address.address}:${address.port} ` +
          `delay=${cfg.delayMs}ms body=${cfg.bodyBytes} pid=${process.pid} node=${process.version} ready\n`,
      );
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`nodehello: worker ${worker.process.pid} exited (${signal || code}); stopping\n`);
    for (const other of Object.values(cluster.workers)) other.process.kill('SIGTERM');
    process.exitCode = 1;
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    // A worker still there after 5 s is killed; the timer does not keep the primary alive.
    setTimeout(() => {
      for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGKILL');
    }, 5000).unref();
    process.on('exit', () => process.stderr.write('nodehello: stopped\n'));
    process.exitCode = 0;
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  for (let i = 0; i < cfg.workers; i++) cluster.fork();
}

/** Run one serving process (alone, or as a cluster worker). */
function runServer(cfg) {
  const server = serve(cfg, (address) => {
    if (cluster.isWorker) return; // the primary says ready for all of them
    process.stderr.write(
      `nodehello: workers=1 http=${address.address}:${address.port} ` +
        `delay=${cfg.delayMs}ms body=${cfg.bodyBytes} pid=${process.pid} node=${process.version} ready\n`,
    );
  });
  const stop = () => {
    server.close();
    server.closeAllConnections();
    if (cluster.isWorker) cluster.worker.disconnect(); // the IPC channel would keep a worker alive
    else process.stderr.write('nodehello: stopped\n');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function main() {
  let cfg;
  try {
    cfg = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`nodehello: ${err.message}\n`);
    process.exit(2);
  }
  if (cfg.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (cfg.workers >= 2 && cluster.isPrimary) runPrimary(cfg);
  else runServer(cfg);
}

main();

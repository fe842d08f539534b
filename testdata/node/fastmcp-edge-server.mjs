// A server built with npm fastmcp's edge runtime (fastmcp/edge, 4.20.16),
// served by node:http: it answers a tools/call for a tool it does not have
// with JSON-RPC error -32602 "Tool not found: X".
//
//   node fastmcp-edge-server.mjs   Streamable HTTP on a free loopback
//                                  port; prints "LISTENING <url>" once
//                                  ready and exits when its standard
//                                  input closes
import http from 'node:http';
import { EdgeFastMCP } from 'fastmcp/edge';
import { z } from 'zod';

const server = new EdgeFastMCP({ name: 'fastmcp-edge-fixture', version: '1.0.0', logger: { debug() {}, info() {}, warn() {}, error() {}, log() {} } });
server.addTool({
  name: 'echo',
  description: 'Echoes its text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => text,
});
server.addTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
});

const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
    else if (v !== undefined) headers.set(k, v);
  }
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers,
    body: req.method === 'GET' || req.method === 'HEAD' || body.length === 0 ? undefined : body,
  });
  const response = await server.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) {
    for await (const c of response.body) res.write(c);
  }
  res.end();
});
httpServer.listen(0, '127.0.0.1', () => {
  const { port } = httpServer.address();
  console.log(`LISTENING http://127.0.0.1:${port}/mcp`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

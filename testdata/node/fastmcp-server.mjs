// A server built with npm fastmcp (4.20.16), which answers a tools/call for
// a tool it does not have with JSON-RPC error -32601
// "MCP error -32601: Unknown tool: X".
//
//   node fastmcp-server.mjs           over stdio
//   node fastmcp-server.mjs --http    over Streamable HTTP on a free
//                                     loopback port; prints "LISTENING <url>"
//                                     once ready and exits when its
//                                     standard input closes
import net from 'node:net';
import { FastMCP } from 'fastmcp';
import { z } from 'zod';

const server = new FastMCP({ name: 'fastmcp-fixture', version: '1.0.0' });
server.addTool({
  name: 'add',
  description: 'Adds two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
});
server.addTool({
  name: 'echo',
  description: 'Echoes its text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => text,
});

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitListening(port) {
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => { c.end(); resolve(true); });
      c.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('fastmcp did not listen');
}

if (process.argv.includes('--http')) {
  const port = await freePort();
  await server.start({ transportType: 'httpStream', httpStream: { port, host: '127.0.0.1', endpoint: '/mcp' } });
  await waitListening(port);
  console.log(`LISTENING http://127.0.0.1:${port}/mcp`);
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
} else {
  await server.start({ transportType: 'stdio' });
}

// A real TypeScript SDK v2 server (@modelcontextprotocol/server 2.4.0) whose
// tool list depends on the caller, as github-mcp-server's does: it lists
// delete_repository only to a client that declares the elicitation
// capability in the request's _meta (2026-07-28) or its initialize (2025),
// and runs it for every caller: one that did not declare elicitation gets
// an actionable isError ("requires client support for form elicitation").
// With --host-check it also refuses a Host that is not localhost (403), as
// the SDK's DNS-rebinding guard does.
//
//   node v2-caps-server.mjs [--host-check]
//
// It prints "LISTENING <url>" once ready.
import http from 'node:http';
import { AsyncLocalStorage } from 'node:async_hooks';
import { McpServer, createMcpHandler, hostHeaderValidationResponse, localhostAllowedHostnames } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

const hostCheck = process.argv.includes('--host-check');

// The capabilities the request being served declared, read from its body
// before the SDK sees it (the body is handed on as parsedBody).
const declared = new AsyncLocalStorage();

function elicitationIn(body) {
  const meta = body?.params?._meta ?? {};
  return Boolean(meta['io.modelcontextprotocol/clientCapabilities']?.elicitation);
}

const handler = createMcpHandler(async () => {
  const server = new McpServer({ name: 'v2-caps', version: '1.0.0' });
  const text = (t) => ({ content: [{ type: 'text', text: t }] });
  server.registerTool('get_repository', { description: 'read a repository' }, async () => text('repository'));
  const caller = declared.getStore() ?? {};
  if (caller.elicitation) {
    server.registerTool('delete_repository', { description: 'delete a repository (asks first)' }, async () => text('deleted'));
  } else if (caller.method === 'tools/call') {
    // Hidden from this caller's list, but run when called.
    server.registerTool('delete_repository', { description: 'delete a repository (asks first)' }, async () => ({
      ...text('Tool "delete_repository" requires client support for form elicitation.'),
      isError: true,
    }));
  }
  return server;
});

const node = toNodeHandler(handler);
const httpServer = http.createServer(async (req, res) => {
  if (hostCheck) {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (!localhostAllowedHostnames().includes(host)) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: `Invalid Host: ${host}` }, id: null }));
      return;
    }
  }
  if (new URL(req.url, 'http://localhost').pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  if (req.method !== 'POST') {
    await node(req, res);
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
    return;
  }
  await declared.run({ elicitation: elicitationIn(body), method: body?.method }, () => node(req, res, body));
});
httpServer.listen(0, '127.0.0.1', () => {
  console.log(`LISTENING http://127.0.0.1:${httpServer.address().port}/mcp`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

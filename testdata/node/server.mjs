// A real TypeScript SDK MCP server for the Go tests (Streamable HTTP or
// stdio). It answers an unknown tool as the SDK does: a result with
// isError: true.
//
//   node server.mjs [--mode=stateless|stateful|stdio] [--json=true] [--tools=echo,add]
//
// Over HTTP it prints "LISTENING <url>" once ready. POST /control?add=NAME
// or ?remove=NAME registers or removes a tool at runtime.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [k, v = 'true'] = a.replace(/^--/, '').split('=');
  return [k, v];
}));
const mode = args.mode || 'stateless';
const enableJsonResponse = args.json === 'true';
const tools = new Set((args.tools || 'echo,add').split(',').filter(Boolean));

// Every live McpServer, with the handles of its registered tools.
const servers = new Set();

function register(entry, name) {
  entry.handles.set(name, entry.server.registerTool(name, {
    description: `the ${name} tool`,
    inputSchema: { text: z.string().optional() },
  }, async ({ text }) => ({ content: [{ type: 'text', text: `${name}:${text ?? ''}` }] })));
}

function newServer() {
  const entry = { server: new McpServer({ name: 'ts-fixture', version: '1.0.0' }), handles: new Map() };
  for (const name of tools) register(entry, name);
  servers.add(entry);
  return entry;
}

if (mode === 'stdio') {
  const { server } = newServer();
  await server.connect(new StdioServerTransport());
} else {
  const sessions = new Map();
  const httpServer = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname === '/control') {
      const add = url.searchParams.get('add');
      const remove = url.searchParams.get('remove');
      if (add && !tools.has(add)) {
        tools.add(add);
        for (const e of servers) register(e, add);
      }
      if (remove && tools.has(remove)) {
        tools.delete(remove);
        for (const e of servers) { e.handles.get(remove)?.remove(); e.handles.delete(remove); }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([...tools].sort()));
      return;
    }
    if (url.pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    try {
      if (mode === 'stateless') {
        const entry = newServer();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse });
        res.on('close', () => { transport.close(); entry.server.close(); servers.delete(entry); });
        await entry.server.connect(transport);
        await transport.handleRequest(req, res);
        return;
      }
      const sid = req.headers['mcp-session-id'];
      let transport = sid && sessions.get(sid);
      if (!transport) {
        if (sid) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        const entry = newServer();
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse,
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); servers.delete(entry); };
        await entry.server.connect(transport);
      }
      await transport.handleRequest(req, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  httpServer.listen(0, '127.0.0.1', () => {
    process.stdout.write(`LISTENING http://127.0.0.1:${httpServer.address().port}/mcp\n`);
  });
  process.stdin.on('end', () => process.exit(0)); // the Go test closed our stdin: stop
  process.stdin.resume();
}

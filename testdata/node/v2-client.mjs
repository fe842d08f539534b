// A real TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0),
// pinned to 2026-07-28: it lists the tools of the server at URL and calls
// TOOL, declaring the elicitation capability when CAPS is "elicitation",
// and prints what it got as one JSON line. A call that fails prints its
// JSON-RPC error code and message instead of a result.
//
//   node v2-client.mjs URL TOOL [CAPS]
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, tool, caps = ''] = process.argv.slice(2);
const capabilities = caps === 'elicitation' ? { elicitation: { form: {} } } : {};
const client = new Client({ name: 'toolguard-v2-client', version: '1.0.0' }, {
  capabilities,
  versionNegotiation: { mode: { pin: '2026-07-28' } },
});
if (caps === 'elicitation') client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: {} }));
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
let call;
try {
  call = { result: await client.callTool({ name: tool, arguments: {} }) };
} catch (err) {
  call = { code: err.code, message: err.message, data: err.data };
}
console.log(JSON.stringify({ tools, call }));
await client.close();

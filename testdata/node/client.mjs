// A real TypeScript SDK client for the Go tests: it lists the tools of the
// server at URL, calls TOOL with ARGS (JSON), calls TOOL_typo, and prints
// what it got as one JSON line.
//
//   node client.mjs URL TOOL ARGS
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, tool, args] = process.argv.slice(2);
const client = new Client({ name: 'toolguard-ts-client', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const call = await client.callTool({ name: tool, arguments: JSON.parse(args) });
let unknown;
try {
  unknown = { result: await client.callTool({ name: `${tool}_typo`, arguments: {} }) };
} catch (err) {
  unknown = { code: err.code, message: err.message, data: err.data };
}
console.log(JSON.stringify({ tools, call, unknown }));
await client.close();

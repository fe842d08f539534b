// A real TypeScript SDK v1 client for the Go tests: it lists the tools of
// the server at URL, as hosts do, calls NAME, and prints as one JSON line
// what a host would show: the message of the error it throws (or the
// result it got).
//
//   node error-client.mjs URL NAME
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, name] = process.argv.slice(2);
const client = new Client({ name: 'toolguard-error-client', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
await client.listTools();
let out;
try {
  out = { result: await client.callTool({ name, arguments: {} }) };
} catch (err) {
  out = { code: err.code, message: err.message };
}
console.log(JSON.stringify(out));
await client.close();

// A real TypeScript SDK client over stdio (StdioClientTransport) for the Go
// tests. It starts CONFIG.command with CONFIG.args, lists the tools, calls
// CONFIG.tool with CONFIG.toolArgs, calls CONFIG.tool + "_typo", and prints
// what it got as one JSON line.
//
//   node stdio-client.mjs '{"command":"...","args":[...],"tool":"echo","toolArgs":{...}}'
//
// With "everything": true it also declares sampling and elicitation, answers
// the server's requests for them, and calls server-everything's
// trigger-long-running-operation (with a progress token),
// trigger-sampling-request and trigger-elicitation-request.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const config = JSON.parse(process.argv[2]);
const capabilities = config.everything ? { sampling: {}, elicitation: { form: {} } } : {};
const client = new Client({ name: 'toolguard-ts-stdio-client', version: '1.0.0' }, { capabilities });
const seen = { sampling: 0, elicitation: 0 };
if (config.everything) {
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    seen.sampling++;
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'sampled by the test client' } };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    seen.elicitation++;
    return { action: 'accept', content: { name: 'Ada Lovelace' } };
  });
}
const transport = new StdioClientTransport({ command: config.command, args: config.args, stderr: 'inherit' });
await client.connect(transport);
const out = {};
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
out.call = await client.callTool({ name: config.tool, arguments: config.toolArgs ?? {} });
try {
  out.unknown = { result: await client.callTool({ name: `${config.tool}_typo`, arguments: {} }) };
} catch (err) {
  out.unknown = { code: err.code, message: err.message, data: err.data };
}
if (config.everything) {
  const progress = [];
  out.longRunning = await client.callTool(
    { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  out.progress = progress;
  out.sampling = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 10 } });
  out.elicitation = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
  out.seen = seen;
}
console.log(JSON.stringify(out));
await client.close();

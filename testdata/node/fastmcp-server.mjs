// A server built with npm fastmcp (4.20.16), which answers a tools/call for
// a tool it does not have with JSON-RPC error -32601
// "MCP error -32601: Unknown tool: X". Over stdio by default; over
// Streamable HTTP at http://127.0.0.1:$PORT/mcp when PORT is set.
import { FastMCP } from "fastmcp";
import { z } from "zod";

const server = new FastMCP({ name: "fastmcp-fixture", version: "1.0.0" });
server.addTool({
  name: "add",
  description: "Adds two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
});
server.addTool({
  name: "echo",
  description: "Echoes its text",
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => text,
});

const port = process.env.PORT;
if (port) {
  server.start({ transportType: "httpStream", httpStream: { port: Number(port), host: "127.0.0.1", endpoint: "/mcp" } });
} else {
  server.start({ transportType: "stdio" });
}

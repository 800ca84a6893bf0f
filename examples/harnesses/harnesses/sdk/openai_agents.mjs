/**
 * An sdk harness on the OpenAI Agents SDK (@openai/agents).
 *
 * It runs inside the attempt's sandbox, in the task's working folder, and gives
 * the model two tools of its own, `shell` and `write_file`, which act on the task
 * there. The SDK speaks OpenAI's Responses API at OPENAI_BASE_URL. Each item of the
 * run's stream becomes HEMRA events through the harness client (hemra-harness):
 * the assistant's text, each tool call and its output, then the run's usage (the
 * SDK reports tokens, no cost). Tracing is off: its exports would go to OpenAI.
 */

import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { Agent, MCPServerSSE, MCPServerStdio, MCPServerStreamableHttp, run, setTracingDisabled, tool } from "@openai/agents";
import { HarnessClient } from "hemra-harness";
import { z } from "zod";

setTracingDisabled(true);
const client = HarnessClient.fromEnv();

function shellTool(workdir) {
  return tool({
    name: "shell",
    description: "Run a bash command in the task's working folder; returns its exit status and output.",
    parameters: z.object({ command: z.string() }),
    execute: ({ command }) =>
      new Promise((done) => {
        execFile("bash", ["-c", command], { cwd: workdir, timeout: 600_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
          const status = error ? (typeof error.code === "number" ? error.code : 1) : 0;
          done(`exit status ${status}\n${stdout}${stderr}`.slice(-20_000));
        });
      }),
  });
}

function writeFileTool(workdir) {
  return tool({
    name: "write_file",
    description: "Write a text file (path relative to the task's working folder, or absolute).",
    parameters: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path, content }) => {
      const target = resolve(workdir, path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
      return `wrote ${Buffer.byteLength(content)} bytes to ${target}`;
    },
  });
}

/** The harness file's [[mcp_server]] tables (HEMRA_MCP_SERVERS) as the SDK's MCP servers. */
function mcpServers() {
  const fill = (value) => value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name) => process.env[name] ?? "");
  const declared = JSON.parse(process.env.HEMRA_MCP_SERVERS || "[]");
  return declared.map((server) => {
    if (server.transport === "stdio") {
      // The SDK gives a stdio server only the variables named here, plus PATH to find its command.
      const env = Object.fromEntries(["PATH", ...(server.env ?? [])].map((name) => [name, process.env[name] ?? ""]));
      return new MCPServerStdio({ name: server.name, command: server.command, args: server.args ?? [], env });
    }
    const headers = Object.fromEntries(Object.entries(server.headers ?? {}).map(([k, v]) => [k, fill(v)]));
    const Server = server.transport === "sse" ? MCPServerSSE : MCPServerStreamableHttp;
    return new Server({ name: server.name, url: server.url, requestInit: { headers } });
  });
}

/** HEMRA events for one item of the run's stream. */
function eventsOf(item) {
  const raw = item.rawItem ?? {};
  if (item.type === "message_output_item") {
    return [{ type: "message", name: "assistant", payload: { role: "assistant", text: item.content } }];
  }
  if (item.type === "tool_call_item") {
    let args = raw.arguments;
    try { args = JSON.parse(raw.arguments); } catch { /* kept as the model sent it */ }
    return [{ type: "tool_call", name: raw.name ?? raw.type, payload: { id: raw.callId ?? raw.id ?? "", arguments: args } }];
  }
  if (item.type === "tool_call_output_item") {
    const output = typeof item.output === "string" ? item.output : JSON.stringify(item.output);
    return [{ type: "tool_result", name: raw.name ?? "tool_output", payload: { id: raw.callId ?? "", output } }];
  }
  return [];
}

const servers = mcpServers();
try {
  for (const server of servers) await server.connect();
  const trial = await client.getTrial();
  const workdir = trial.workdir || "/";
  await client.emitEvents([{ type: "message", name: "user", payload: { role: "user", text: trial.instruction } }]);
  const agent = new Agent({
    name: "hemra-openai-agents",
    instructions: "You solve the task in the working folder with your tools, then say briefly what you did.",
    model: trial.model || undefined,
    tools: [shellTool(workdir), writeFileTool(workdir)],
    mcpServers: servers,
  });
  const result = await run(agent, trial.instruction, { stream: true, maxTurns: 50 });
  for await (const streamed of result) {
    if (streamed.type === "run_item_stream_event") {
      const events = eventsOf(streamed.item);
      if (events.length) await client.emitEvents(events);
    }
  }
  await result.completed;
  const usage = result.state.usage;
  await client.emitEvents([{ type: "usage", name: "total", payload: {
    input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, total_tokens: usage.totalTokens,
    model_calls: usage.requests,
  } }]);
  if (result.error) throw result.error;
  await client.finish("completed");
} catch (error) {
  const message = String(error?.message ?? error).slice(0, 500);
  // Said through the protocol, the failure and its reason are the attempt's; only when that
  // cannot be said does the exit status carry it (with the message on standard error).
  const said = await client.emitEvents([{ type: "error", name: "agent", payload: { message } }])
    .then(() => client.finish("failed", { message })).then(() => true, () => false);
  if (!said) {
    console.error(message);
    process.exitCode = 1;
  }
} finally {
  for (const server of servers) await server.close().catch(() => {});
  client.close();
}

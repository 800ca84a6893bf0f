/**
 * An sdk harness on the Claude Agent SDK (@anthropic-ai/claude-agent-sdk).
 *
 * It runs inside the attempt's sandbox: query() starts Claude Code there, in the
 * task's working folder, so its Bash, Read, Write and Edit tools act on the task.
 * Each message of the SDK's stream becomes HEMRA events through the harness client
 * (hemra-harness): the assistant's text, each tool call and its result, and the
 * usage and cost of the result message. The SDK and the client come from HEMRA's
 * tools folder, mounted where Node finds them.
 */

import { query } from "@anthropic-ai/claude-agent-sdk";
import { HarnessClient } from "hemra-harness";

/** The text of a content field: a string, or blocks of which the text ones count. */
function textOf(content) {
  if (typeof content === "string") return content;
  return (content ?? []).filter((b) => b?.type === "text").map((b) => b.text).join("\n");
}

/** Each tool call's tool, by its id: its result is recorded under the same name. */
const toolNames = new Map();

/** HEMRA events for one message of the SDK's stream. */
function eventsOf(message) {
  if (message.type === "system" && message.subtype === "init") {
    return [{ type: "status", name: "init", payload: {
      session_id: message.session_id, model: message.model, tools: message.tools,
      claude_code_version: message.claude_code_version ?? "",
    } }];
  }
  if (message.type === "assistant") {
    return (message.message?.content ?? []).flatMap((block) => {
      if (block.type === "text") return [{ type: "message", name: "assistant", payload: { role: "assistant", text: block.text } }];
      if (block.type === "thinking") return [{ type: "message", name: "thinking", payload: { role: "thinking", text: block.thinking } }];
      if (block.type === "tool_use") {
        toolNames.set(block.id, block.name);
        return [{ type: "tool_call", name: block.name, payload: { id: block.id, arguments: block.input } }];
      }
      return [];
    });
  }
  if (message.type === "user" && Array.isArray(message.message?.content)) {
    return message.message.content
      .filter((block) => block.type === "tool_result")
      .map((block) => ({ type: "tool_result", name: toolNames.get(block.tool_use_id) ?? "tool_result", payload: {
        id: block.tool_use_id, output: textOf(block.content), is_error: Boolean(block.is_error),
      } }));
  }
  if (message.type === "result") {
    const usage = message.usage ?? {};
    return [
      { type: "usage", name: "total", payload: {
        input_tokens: usage.input_tokens ?? 0, output_tokens: usage.output_tokens ?? 0,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
        cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
        cost_usd: message.total_cost_usd ?? 0, models: message.modelUsage ?? {},
      } },
      { type: "status", name: "result", payload: {
        subtype: message.subtype, is_error: message.is_error, num_turns: message.num_turns,
        stop_reason: message.stop_reason ?? null, result: message.result ?? "", errors: message.errors ?? [],
      } },
    ];
  }
  return [];
}

/** The harness file's [[mcp_server]] tables (HEMRA_MCP_SERVERS) as the SDK's mcpServers. */
function mcpServers() {
  const fill = (value) => value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name) => process.env[name] ?? "");
  const declared = JSON.parse(process.env.HEMRA_MCP_SERVERS || "[]");
  return Object.fromEntries(declared.map((server) => [server.name, server.transport === "stdio"
    ? { type: "stdio", command: server.command, args: server.args ?? [],
        env: Object.fromEntries((server.env ?? []).map((name) => [name, process.env[name] ?? ""])) }
    : { type: server.transport === "sse" ? "sse" : "http", url: server.url,
        headers: Object.fromEntries(Object.entries(server.headers ?? {}).map(([k, v]) => [k, fill(v)])) }]));
}

const client = HarnessClient.fromEnv();
try {
  const trial = await client.getTrial();
  await client.emitEvents([{ type: "message", name: "user", payload: { role: "user", text: trial.instruction } }]);
  let failure = "the SDK's stream ended without a result";
  const stream = query({
    prompt: trial.instruction,
    options: {
      cwd: trial.workdir || "/",
      model: trial.model || undefined,
      permissionMode: "bypassPermissions",
      allowDangerouslySkipPermissions: true,
      settingSources: [],
      maxTurns: 50,
      mcpServers: mcpServers(),
      strictMcpConfig: true,
      env: process.env,
      stderr: (data) => process.stderr.write(data),
    },
  });
  for await (const message of stream) {
    const events = eventsOf(message);
    if (events.length) await client.emitEvents(events);
    if (message.type === "result") {
      failure = message.is_error ? `the agent ended with ${message.subtype}: ${(message.errors ?? []).join("; ") || message.result || ""}` : "";
    }
  }
  await client.finish(failure ? "failed" : "completed", failure ? { message: failure.slice(0, 500) } : {});
} catch (error) {
  // The SDK threw (Claude Code could not start, or exited on an error): the attempt failed, saying why.
  const message = String(error?.message ?? error).slice(0, 500);
  const said = await client.emitEvents([{ type: "error", name: "agent", payload: { message } }])
    .then(() => client.finish("failed", { message })).then(() => true, () => false);
  if (!said) {
    console.error(message);
    process.exitCode = 1;
  }
} finally {
  client.close();
}

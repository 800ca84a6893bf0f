/**
 * A scripted harness in TypeScript, on the hemra-harness client (clients/harness-ts).
 *
 * It has no model: for each task it carries a script, ../scripts/<task>/steps.json,
 * a list of steps it replays through the harness protocol. A step may say
 * something (a message event), read a sandbox file (readFile), run a command in
 * the sandbox (runCommand), or write a file of the script's folder into the
 * sandbox (writeFiles). A task
 * without a script, or a step that fails, ends the attempt as failed, with why.
 */

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HarnessClient } from "hemra-harness";

const VERSION = "1.0.0";
const SCRIPTS = fileURLToPath(new URL("../../scripts", import.meta.url));

interface Step {
  say?: string;
  read?: string;
  run?: string;
  write?: string;
  from?: string;
  executable?: boolean;
}

function taskFolder(taskName: string): string {
  return join(SCRIPTS, taskName.split("/").pop() as string);
}

/** The task's steps, or null when this harness has no script for it. */
function loadScript(taskName: string): Step[] | null {
  const path = join(taskFolder(taskName), "steps.json");
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")).steps as Step[];
}

function known(): string[] {
  return readdirSync(SCRIPTS).filter((name) => existsSync(join(SCRIPTS, name, "steps.json"))).sort();
}

/** Plays one step; the reason it failed, or null. */
async function runStep(client: HarnessClient, folder: string, number: number, step: Step): Promise<string | null> {
  if (step.say !== undefined) {
    await client.emitEvents([{ type: "message", name: "assistant", payload: { role: "assistant", text: step.say } }]);
  }
  if (step.read !== undefined) {
    const content = await client.readFile(step.read);
    await client.emitEvents([{ type: "tool_call", name: "read_file", payload: { path: step.read, bytes: content.length } }]);
  }
  if (step.write !== undefined && step.from !== undefined) {
    const content = readFileSync(join(folder, step.from));
    await client.writeFiles([{ path: step.write, content, executable: Boolean(step.executable) }]);
    await client.emitEvents([{ type: "tool_call", name: "write_file", payload: { path: step.write, bytes: content.length } }]);
  }
  if (step.run !== undefined) {
    const result = await client.runCommand(step.run);
    if (result.timedOut || result.exitCode !== 0) {
      const why = result.timedOut ? "timed out" : `exited ${result.exitCode}`;
      const lastLine = result.stderr.toString().trim().split("\n").pop() ?? "";
      return `step ${number} (${JSON.stringify(step.run.slice(0, 60))}) ${why}${lastLine ? ": " + lastLine : ""}`;
    }
  }
  return null;
}

async function main(): Promise<void> {
  const client = HarnessClient.fromEnv();
  try {
    const trial = await client.getTrial();
    await client.emitEvents([{ type: "message", name: "user", payload: { role: "user", text: trial.instruction } }]);
    const steps = loadScript(trial.taskName);
    if (steps === null) {
      const message = `no script for task ${trial.taskName} (this harness only knows ${known().join(", ")})`;
      await client.emitEvents([{ type: "error", name: "no_script", payload: { message } }]);
      await client.finish("failed", { message, agentVersion: VERSION });
      return;
    }
    const folder = taskFolder(trial.taskName);
    for (const [index, step] of steps.entries()) {
      const failure = await runStep(client, folder, index + 1, step);
      if (failure !== null) {
        await client.emitEvents([{ type: "error", name: "step_failed", payload: { message: failure } }]);
        await client.finish("failed", { message: failure, agentVersion: VERSION });
        return;
      }
    }
    await client.emitEvents([{ type: "message", name: "assistant", payload: { role: "assistant", text: `done: ${steps.length} steps` } }]);
    await client.finish("completed", { agentVersion: VERSION });
  } finally {
    client.close();
  }
}

await main();

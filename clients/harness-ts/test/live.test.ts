// Every call against a real executor's HarnessService. HEMRA's tests start one
// (tests/harness_clients/test_ts_client.py) and pass its address and two
// tokens: one for a harness phase, one that was never issued.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  HarnessClient, NotFoundError, PermissionDeniedError, UnauthenticatedError, FailedPreconditionError,
} from "../src/index.js";

const address = process.env.HEMRA_TEST_HARNESS_ADDRESS;
const token = process.env.HEMRA_TEST_HARNESS_TOKEN ?? "";
const reason = "needs a HarnessService: HEMRA_TEST_HARNESS_ADDRESS and HEMRA_TEST_HARNESS_TOKEN (set by HEMRA's tests)";

function client(): HarnessClient {
  return new HarnessClient(address as string, token);
}

test("getTrial returns the trial", { skip: address ? false : reason }, async () => {
  const c = client();
  try {
    const trial = await c.getTrial();
    assert.equal(trial.attemptId, "attempt-ts");
    assert.equal(trial.taskName, "hemra/ts-client");
    assert.equal(trial.instruction, "Exercise every call.\n");
    assert.equal(trial.model, "scripted-model");
    assert.equal(trial.workdir, "/app");
    assert.ok(trial.timeoutSecs > 100 && trial.timeoutSecs <= 300, String(trial.timeoutSecs));
  } finally {
    c.close();
  }
});

test("runCommand passes cwd, env and stdin and reports exit codes and timeouts", { skip: address ? false : reason }, async () => {
  const c = client();
  try {
    const result = await c.runCommand('pwd; echo "$GREETING"; cat; exit 3', {
      cwd: "/tmp", env: { GREETING: "hello" }, stdin: "from stdin\n",
    });
    assert.equal(result.exitCode, 3);
    assert.equal(result.stdout.toString(), "/tmp\nhello\nfrom stdin\n");
    assert.equal(result.timedOut, false);
    const inWorkdir = await c.runCommand("pwd; echo oops >&2");
    assert.equal(inWorkdir.stdout.toString(), "/app\n");
    assert.equal(inWorkdir.stderr.toString(), "oops\n");
    const slow = await c.runCommand("sleep 30", { timeoutSecs: 0.5 });
    assert.equal(slow.timedOut, true);
    assert.ok(slow.durationSecs < 10, String(slow.durationSecs));
  } finally {
    c.close();
  }
});

test("writeFiles, readFile and removePath move bytes in the sandbox", { skip: address ? false : reason }, async () => {
  const c = client();
  try {
    const binary = Uint8Array.from([0, 1, 2, 254, 255]);
    await c.writeFiles([
      { path: "/app/out/run.sh", content: "#!/bin/sh\necho ran\n", executable: true },
      { path: "data.bin", content: binary },
      { path: "/app/gone/file.txt", content: "x" },
    ]);
    assert.equal((await c.runCommand("/app/out/run.sh")).stdout.toString(), "ran\n");
    assert.deepEqual(new Uint8Array(await c.readFile("/app/data.bin")), binary);
    await c.removePath("/app/gone");
    await c.removePath("/app/never-there");
    await assert.rejects(c.readFile("/app/gone/file.txt"), NotFoundError);
    await assert.rejects(c.readFile("/app/out"), NotFoundError);
    await assert.rejects(c.writeFiles([{ path: "/etc/evil", content: "x" }]), PermissionDeniedError);
    await assert.rejects(c.removePath("/app/../etc"), PermissionDeniedError);
  } finally {
    c.close();
  }
});

test("emitEvents is refused in a phase that takes no events", { skip: address ? false : reason }, async () => {
  const c = client();
  try {
    await assert.rejects(c.emitEvents([{ type: "message", name: "assistant", payload: { text: "hi" } }]),
      (error: Error) => error instanceof FailedPreconditionError && /events are not accepted/.test(error.message));
  } finally {
    c.close();
  }
});

test("finish records the status, message and version", { skip: address ? false : reason }, async () => {
  const c = client();
  try {
    await c.finish("failed", { message: "gave up", agentVersion: "9.9.9" });
  } finally {
    c.close();
  }
});

test("a wrong token is UNAUTHENTICATED on every call", { skip: address ? false : reason }, async () => {
  const c = new HarnessClient(address as string, "not-a-token");
  try {
    const calls: (() => Promise<unknown>)[] = [
      () => c.getTrial(), () => c.runCommand("true"), () => c.readFile("/app/data.bin"),
      () => c.writeFiles([{ path: "x", content: "" }]), () => c.removePath("/app/x"),
      () => c.emitEvents([{ type: "message" }]), () => c.finish("completed"),
    ];
    for (const call of calls) {
      await assert.rejects(call, (error: Error) =>
        error instanceof UnauthenticatedError && /unknown or expired attempt token/.test(error.message));
    }
  } finally {
    c.close();
  }
});

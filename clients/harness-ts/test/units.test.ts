// Tests that need no executor: configuration, error classes, an unreachable
// executor, and the proto copies against the repository's protos/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { status } from "@grpc/grpc-js";
import {
  HarnessClient, ConfigurationError, HarnessError, NotFoundError, UnauthenticatedError, UnavailableError,
  PermissionDeniedError, DeadlineExceededError, FailedPreconditionError, InternalError, errorFromStatus,
} from "../src/index.js";

const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

test("fromEnv names every missing variable", () => {
  assert.throws(() => HarnessClient.fromEnv({}), (error: Error) => {
    assert.ok(error instanceof ConfigurationError);
    assert.match(error.message, /HEMRA_HARNESS_ADDRESS and HEMRA_HARNESS_TOKEN not set/);
    return true;
  });
  assert.throws(() => HarnessClient.fromEnv({ HEMRA_HARNESS_ADDRESS: "127.0.0.1:1" }), /^ConfigurationError: HEMRA_HARNESS_TOKEN not set/);
});

test("each status maps to its error class", () => {
  const cases: [number, new (...args: never[]) => Error][] = [
    [status.UNAUTHENTICATED, UnauthenticatedError], [status.NOT_FOUND, NotFoundError],
    [status.PERMISSION_DENIED, PermissionDeniedError], [status.DEADLINE_EXCEEDED, DeadlineExceededError],
    [status.FAILED_PRECONDITION, FailedPreconditionError], [status.UNAVAILABLE, UnavailableError],
    [status.INTERNAL, InternalError], [status.RESOURCE_EXHAUSTED, HarnessError],
  ];
  for (const [code, ErrorClass] of cases) {
    const error = errorFromStatus("readFile", { code, details: "why" });
    assert.ok(error instanceof ErrorClass, `${status[code]} -> ${error.name}`);
    assert.ok(error instanceof HarnessError);
    assert.equal(error.code, code);
    assert.equal(error.message, `readFile: ${status[code]}: why`);
  }
});

test("an executor that is not there is UNAVAILABLE", async () => {
  const client = new HarnessClient("127.0.0.1:1", "token", { deadlineMs: 5000 });
  try {
    await assert.rejects(client.getTrial(), (error: HarnessError) => {
      assert.ok(error instanceof UnavailableError, String(error));
      assert.equal(error.codeName, "UNAVAILABLE");
      assert.equal(error.method, "getTrial");
      return true;
    });
  } finally {
    client.close();
  }
});

test("finish refuses an unknown status before calling", async () => {
  const client = new HarnessClient("127.0.0.1:1", "token");
  try {
    await assert.rejects(client.finish("done" as never), /finish status must be "completed" or "failed"/);
  } finally {
    client.close();
  }
});

test("the shipped .proto files are the repository's", (t) => {
  if (!existsSync(new URL("../../../../protos", import.meta.url))) {
    t.skip("outside the HEMRA repository: no protos/ to compare with");
    return;
  }
  const result = spawnSync(process.execPath, ["scripts/copy-protos.mjs", "--check"], { cwd: packageRoot, encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
});

/**
 * The TypeScript client of the HEMRA harness protocol (hemra.v1.HarnessService).
 *
 *     import { HarnessClient } from "hemra-harness";
 *     const client = HarnessClient.fromEnv();
 *     const trial = await client.getTrial();
 *     const result = await client.runCommand("ls /app");
 *     await client.writeFiles([{ path: "/app/answer.txt", content: "42\n" }]);
 *     await client.finish("completed");
 *     client.close();
 *
 * The .proto files ship in this package (proto/), copied from HEMRA's protos/.
 */

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";

export {
  HarnessError, ConfigurationError, UnauthenticatedError, NotFoundError, PermissionDeniedError,
  DeadlineExceededError, FailedPreconditionError, InvalidArgumentError, UnavailableError, InternalError,
  errorFromStatus,
} from "./errors.js";
import { ConfigurationError, errorFromStatus } from "./errors.js";

/** The variables a program harness gets from the executor. */
export const ADDRESS_ENV = "HEMRA_HARNESS_ADDRESS";
export const TOKEN_ENV = "HEMRA_HARNESS_TOKEN";
/** HEMRA's services accept messages up to this size; so does this client. */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
/** Calls other than RunCommand give up after this long. */
const DEFAULT_DEADLINE_MS = 60_000;

export interface Trial {
  attemptId: string;
  instruction: string;
  /** For example "hemra/text-stats". */
  taskName: string;
  /** The harness's model, else the run's (may be empty). */
  model: string;
  /** Seconds the attempt has left. */
  timeoutSecs: number;
  /** The task's working folder inside the sandbox. */
  workdir: string;
}

export interface RunOptions {
  /** Default: the task's working folder. */
  cwd?: string;
  /** Added to the sandbox's environment. */
  env?: Record<string, string>;
  /** Seconds; 0 or absent: the attempt's remaining time. */
  timeoutSecs?: number;
  stdin?: string | Uint8Array;
}

export interface CommandResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
  durationSecs: number;
}

export interface FileToWrite {
  /** Absolute in the sandbox, or relative to the task's working folder. */
  path: string;
  content: string | Uint8Array;
  /** Mode 0755 when true, else 0644. */
  executable?: boolean;
}

export interface HarnessEvent {
  /** message, tool_call, tool_result, usage, ... (see docs/harness-protocol.md). */
  type: string;
  name?: string;
  /** A JSON object: the event's content. */
  payload?: Record<string, unknown>;
  /** Default: now. */
  time?: Date;
  durationSecs?: number;
}

export type FinishStatus = "completed" | "failed";

export interface FinishOptions {
  message?: string;
  /** The agent version actually run, when the harness knows it. */
  agentVersion?: string;
}

export interface ClientOptions {
  /** Deadline of each call but RunCommand (whose deadline follows its timeout). */
  deadlineMs?: number;
}

interface Duration { seconds: number | string; nanos: number }

type Callback<T> = (error: grpc.ServiceError | null, response: T) => void;
type Unary = (request: object, metadata: grpc.Metadata, options: grpc.CallOptions, callback: Callback<unknown>) => void;

let serviceConstructor: grpc.ServiceClientConstructor | undefined;

/** The HarnessService client class, loaded once from the package's proto/ folder. */
function harnessService(): grpc.ServiceClientConstructor {
  if (serviceConstructor === undefined) {
    const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));
    const definition = protoLoader.loadSync("hemra/v1/harness_service.proto", {
      includeDirs: [protoRoot], keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true,
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      hemra: { v1: { HarnessService: grpc.ServiceClientConstructor } };
    };
    serviceConstructor = loaded.hemra.v1.HarnessService;
  }
  return serviceConstructor;
}

function toDuration(seconds: number): Duration {
  const whole = Math.floor(seconds);
  return { seconds: whole, nanos: Math.round((seconds - whole) * 1e9) };
}

function fromDuration(duration: Duration | null | undefined): number {
  if (!duration) return 0;
  return Number(duration.seconds) + duration.nanos / 1e9;
}

function toBytes(content: string | Uint8Array): Buffer {
  return typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
}

/** One attempt's connection to the executor, authenticated by the attempt's token. */
export class HarnessClient {
  readonly address: string;
  private readonly client: grpc.Client;
  private readonly metadata: grpc.Metadata;
  private readonly deadlineMs: number;

  constructor(address: string, token: string, options: ClientOptions = {}) {
    if (!address) throw new ConfigurationError("the harness protocol address is empty");
    if (!token) throw new ConfigurationError("the harness protocol token is empty");
    const Service = harnessService();
    this.address = address;
    this.client = new Service(address, grpc.credentials.createInsecure(), {
      "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
      "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    });
    this.metadata = new grpc.Metadata();
    this.metadata.set("authorization", `Bearer ${token}`);
    this.deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  }

  /** From HEMRA_HARNESS_ADDRESS and HEMRA_HARNESS_TOKEN, as a program harness gets them. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, options: ClientOptions = {}): HarnessClient {
    const address = env[ADDRESS_ENV];
    const token = env[TOKEN_ENV];
    const missing = [address ? "" : ADDRESS_ENV, token ? "" : TOKEN_ENV].filter(Boolean);
    if (missing.length) {
      throw new ConfigurationError(`${missing.join(" and ")} not set: run this as a HEMRA program harness`);
    }
    return new HarnessClient(address as string, token as string, options);
  }

  /** The trial: instruction, limits, model. */
  async getTrial(): Promise<Trial> {
    const response = await this.call("getTrial", {});
    return {
      attemptId: response.attemptId, instruction: response.instruction, taskName: response.taskName,
      model: response.model, timeoutSecs: fromDuration(response.timeout), workdir: response.workdir,
    };
  }

  /** Runs `bash -c command` in the sandbox and waits for it. A non-zero exit is a result, not an error. */
  async runCommand(command: string, options: RunOptions = {}): Promise<CommandResult> {
    const request: Record<string, unknown> = {
      command, cwd: options.cwd ?? "", env: options.env ?? {}, stdin: toBytes(options.stdin ?? ""),
    };
    if (options.timeoutSecs) request.timeout = toDuration(options.timeoutSecs);
    // The executor cuts the command at the attempt's time; the call itself needs no shorter deadline.
    const response = await this.call("runCommand", request, null);
    return {
      exitCode: response.exitCode, stdout: Buffer.from(response.stdout), stderr: Buffer.from(response.stderr),
      timedOut: response.timedOut, durationSecs: fromDuration(response.duration),
    };
  }

  /** A sandbox file's bytes. NotFoundError when it does not exist or is a folder. */
  async readFile(path: string): Promise<Buffer> {
    const response = await this.call("readFile", { path });
    return Buffer.from(response.content);
  }

  /** Writes files into the sandbox, creating folders as needed. */
  async writeFiles(files: FileToWrite[]): Promise<void> {
    await this.call("writeFiles", {
      files: files.map((f) => ({ path: f.path, content: toBytes(f.content), executable: Boolean(f.executable) })),
    });
  }

  /** Removes a file or folder tree of the sandbox (no error when absent). */
  async removePath(path: string): Promise<void> {
    await this.call("removePath", { path });
  }

  /** Adds events to the attempt's log. */
  async emitEvents(events: HarnessEvent[]): Promise<void> {
    await this.call("emitEvents", {
      events: events.map((e) => {
        const millis = (e.time ?? new Date()).getTime();
        return {
          type: e.type, name: e.name ?? "", payloadJson: JSON.stringify(e.payload ?? {}),
          time: { seconds: Math.floor(millis / 1000), nanos: (millis % 1000) * 1e6 },
          duration: toDuration(e.durationSecs ?? 0),
        };
      }),
    });
  }

  /** Ends the harness's part with a status; the attempt ends when the process exits. */
  async finish(status: FinishStatus, options: FinishOptions = {}): Promise<void> {
    if (status !== "completed" && status !== "failed") {
      throw new TypeError(`finish status must be "completed" or "failed" (got ${JSON.stringify(status)})`);
    }
    await this.call("finish", {
      status: status === "completed" ? "FINISH_STATUS_COMPLETED" : "FINISH_STATUS_FAILED",
      message: options.message ?? "", agentVersion: options.agentVersion ?? "",
    });
  }

  close(): void {
    this.client.close();
  }

  // The response's shape is the proto's, loaded at run time: each caller reads the fields it knows.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private call(method: string, request: object, deadlineMs: number | null = this.deadlineMs): Promise<any> {
    const rpc = (this.client as unknown as Record<string, Unary>)[method].bind(this.client);
    const options: grpc.CallOptions = deadlineMs === null ? {} : { deadline: Date.now() + deadlineMs };
    return new Promise((resolve, reject) => {
      rpc(request, this.metadata, options, (error, response) => {
        if (error) reject(errorFromStatus(method, error));
        else resolve(response);
      });
    });
  }
}

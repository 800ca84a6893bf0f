/** Errors of the harness protocol: one class per gRPC status a harness should tell apart. */

import { status as Status, type ServiceError } from "@grpc/grpc-js";

/** The executor answered a call with an error status (or could not be reached). */
export class HarnessError extends Error {
  /** The gRPC status code (a number, as in @grpc/grpc-js's `status`). */
  readonly code: number;
  /** Its name, for example "NOT_FOUND". */
  readonly codeName: string;
  /** The RPC that failed, for example "readFile". */
  readonly method: string;
  /** The executor's own message. */
  readonly details: string;

  constructor(method: string, code: number, details: string) {
    const codeName = Status[code] ?? String(code);
    super(`${method}: ${codeName}: ${details}`);
    this.name = new.target.name;
    this.code = code;
    this.codeName = codeName;
    this.method = method;
    this.details = details;
  }
}

/** The token is missing, unknown or revoked (the harness's part of the attempt has ended). */
export class UnauthenticatedError extends HarnessError {}
/** ReadFile of a path that does not exist or is a folder. */
export class NotFoundError extends HarnessError {}
/** Writing or removing under a read-only folder, or a path with "..". */
export class PermissionDeniedError extends HarnessError {}
/** RunCommand after the attempt's time is up, or a call past its deadline. */
export class DeadlineExceededError extends HarnessError {}
/** A call the current phase does not accept (EmitEvents with the verifier's token). */
export class FailedPreconditionError extends HarnessError {}
export class InvalidArgumentError extends HarnessError {}
/** The executor cannot be reached. */
export class UnavailableError extends HarnessError {}
/** The sandbox itself failed. */
export class InternalError extends HarnessError {}

/** The client was given no address or token (not run as a program harness). */
export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigurationError";
  }
}

const BY_CODE: Record<number, typeof HarnessError> = {
  [Status.UNAUTHENTICATED]: UnauthenticatedError,
  [Status.NOT_FOUND]: NotFoundError,
  [Status.PERMISSION_DENIED]: PermissionDeniedError,
  [Status.DEADLINE_EXCEEDED]: DeadlineExceededError,
  [Status.FAILED_PRECONDITION]: FailedPreconditionError,
  [Status.INVALID_ARGUMENT]: InvalidArgumentError,
  [Status.UNAVAILABLE]: UnavailableError,
  [Status.INTERNAL]: InternalError,
};

/** The error class for a failed call's status. */
export function errorFromStatus(method: string, error: Pick<ServiceError, "code" | "details">): HarnessError {
  const ErrorClass = BY_CODE[error.code] ?? HarnessError;
  return new ErrorClass(method, error.code, error.details || "");
}

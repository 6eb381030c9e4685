import type { Verification } from "./verdict.js";

/** One file's answer among many: its verification, or why it could not be read. */
export type FileVerification =
  | { readonly code: "checked"; readonly path: string; readonly verification: Verification }
  | { readonly code: "unreadable"; readonly path: string; readonly detail: string };

/** What `verifyRecordFiles` sends a thread of file-worker.ts: one file to verify. */
export interface FileRequest {
  readonly id: number;
  readonly path: string;
  readonly trust: readonly string[] | undefined;
  /** Refuse the file, without blocking, unless it is a regular file (one found by walking a directory). */
  readonly regularOnly: boolean;
}

/** What the thread answers: the file's result, or a failure of the thread itself. */
export type FileAnswer = { readonly id: number; readonly result: FileVerification } | { readonly id: number; readonly failure: string };

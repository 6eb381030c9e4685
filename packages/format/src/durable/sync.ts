import { close, fsync, fsyncSync, open } from "node:fs";
import { asError } from "./thrown.js";

/**
 * fsync `fd`. In place, on this thread: for a lone waiter with nothing else in flight that
 * saves the thread hop (~30-50 µs measured) and blocks nothing that could have run (ADR
 * 0004). Otherwise on the libuv pool, the event loop running on while the disk works.
 */
export function syncFile(fd: number, inPlace: boolean): Promise<void> {
  return inPlace ? syncNow(fd) : syncOffThread(fd);
}

function syncOffThread(fd: number): Promise<void> {
  return new Promise<void>((resolve, reject) => fsync(fd, (error) => (error === null ? resolve() : reject(error))));
}

function syncNow(fd: number): Promise<void> {
  try {
    fsyncSync(fd);
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(asError(error));
  }
}

/** fsync a directory, so that a file created or renamed in it survives a crash. */
export async function syncDirectory(directory: string): Promise<void> {
  const fd = await new Promise<number>((resolve, reject) => open(directory, "r", (error, opened) => (error === null ? resolve(opened) : reject(error))));
  try {
    await syncOffThread(fd);
  } finally {
    await new Promise<void>((resolve) => close(fd, () => resolve()));
  }
}

export { asError, errnoOf, messageOf } from "./thrown.js";

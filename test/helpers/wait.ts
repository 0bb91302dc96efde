/**
 * Reads until `done` holds or 20 s pass, and answers the last value read: for state that background
 * work settles (approvals reset by a push, a merge status past `checking`).
 */
export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

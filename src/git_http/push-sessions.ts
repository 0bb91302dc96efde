/**
 * Pushes in flight, by the secret their hooks present: git's pre-receive and post-receive hooks
 * (src/git/hooks) post the ref changes back to `/-/internal/git/<hook>`, and the push's session
 * checks them before the refs move and records them after.
 */
import crypto from 'node:crypto';
import type { Context } from 'koa';
import { faultPoint } from '../core/faults.js';
import { readBodyParams } from '../core/http.js';
import type { RefChange } from '../git/ref-changes.js';

export const HOOK_PATH = '/-/internal/git/';

export interface PushSession {
  /** Why the push is refused, or null; `quarantine` is git's environment for the pushed objects. */
  refusal(changes: RefChange[], quarantine?: Record<string, string>): Promise<string | null>;
  record(changes: RefChange[], pushOptions: string[]): Promise<void>;
}

export class PushSessions {
  private readonly sessions = new Map<string, PushSession>();

  /** Registers the push of this request until its response closes; returns the hooks' environment. */
  open(ctx: Context, session: PushSession): Record<string, string> {
    const secret = crypto.randomBytes(24).toString('hex');
    this.sessions.set(secret, session);
    ctx.res.once('close', () => this.sessions.delete(secret));
    const socket = ctx.req.socket;
    const host = socket.localAddress?.includes(':') ? `[${socket.localAddress}]` : socket.localAddress;
    return {
      FORGE_HOOK_URL: `http://${host}:${socket.localPort}${HOOK_PATH.slice(0, -1)}`,
      FORGE_HOOK_SECRET: secret,
    };
  }

  /** A hook's call: pre-receive asks for a refusal, post-receive records the moved refs. */
  async answerHook(ctx: Context, hook: string): Promise<void> {
    const payload = (await readBodyParams(ctx)) as {
      secret?: string;
      changes?: RefChange[];
      pushOptions?: unknown;
      quarantine?: Record<string, string>;
    };
    const session = payload.secret ? this.sessions.get(payload.secret) : undefined;
    if (!session || !Array.isArray(payload.changes)) {
      ctx.status = 403;
      ctx.body = { allowed: false, message: 'Unknown push.' };
      return;
    }
    if (hook === 'pre-receive') {
      faultPoint('push:pre-receive');
      const reason = await session.refusal(payload.changes, payload.quarantine);
      ctx.body = reason ? { allowed: false, message: reason } : { allowed: true };
      return;
    }
    const pushOptions = Array.isArray(payload.pushOptions)
      ? payload.pushOptions.filter((option): option is string => typeof option === 'string')
      : [];
    await session.record(payload.changes, pushOptions);
    ctx.body = { allowed: true };
  }
}

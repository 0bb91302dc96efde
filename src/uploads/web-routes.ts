/**
 * Uploads as the web serves them (not REST): `/-/project/:id/uploads/:secret/:filename` and
 * `/<project full path>/uploads/:secret/:filename`, streamed with their type, to whoever may read the
 * project (see UploadsService.forWeb). The token is read as the API reads it.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { presentedToken } from '../core/auth.js';
import { notFound } from '../core/errors.js';
import type { ServiceRegistry } from '../core/family.js';
import { queryPairs } from '../core/params.js';
import { decodeComponent } from '../core/strings.js';
import { uploadHeaders } from './content-types.js';

const BY_ID = /^\/-\/project\/(\d+)\/uploads\/([^/]+)\/([^/]+)$/;
const BY_PATH = /^\/(.+)\/uploads\/([0-9a-f]{32})\/([^/]+)$/;

export function uploadsWebRouter(services: Pick<ServiceRegistry, 'authentication' | 'uploads'>): Router {
  const router = new Router();
  const serve = async (ctx: Context, project: string, secret: string, filename: string) => {
    ctx.state.route = 'upload';
    const caller = await services.authentication.authenticate(
      presentedToken(ctx.headers, queryPairs(ctx.querystring)),
    );
    const upload = await services.uploads.forWeb(caller, project, secret, filename);
    const stream = await services.uploads.open(upload);
    ctx.set(uploadHeaders(upload.filename, upload.size));
    ctx.status = 200;
    ctx.body = stream;
  };
  router.get(BY_ID, (ctx) => {
    const [, id, secret, filename] = BY_ID.exec(ctx.path)!;
    return serve(ctx, id, decodeComponent(secret, false), decodeComponent(filename, false));
  });
  router.get(BY_PATH, (ctx, next) => {
    const match = BY_PATH.exec(ctx.path)!;
    // The API's paths are the API's (`/api/v4/projects/:id/uploads/:secret/:filename` included).
    if (match[1].startsWith('api/')) return next();
    if (match[1].startsWith('-/')) throw notFound();
    return serve(ctx, decodeComponent(match[1], false), match[2], decodeComponent(match[3], false));
  });
  return router;
}

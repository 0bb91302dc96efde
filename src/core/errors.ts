/**
 * GitLab's error shapes, in one place. Services throw ApiError; the error middleware writes it.
 * Anything else thrown becomes a bare 500 with no internal detail.
 */
export type ErrorBody =
  | { error: string; error_description?: string; scope?: string }
  | { message: string | string[] | Record<string, string[] | string> };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(
      typeof (body as { error?: string }).error === 'string'
        ? (body as { error: string }).error
        : String(status),
    );
  }
}

/** 400 for a parameter: `{"error": "name is missing"}`. */
export const badParameter = (text: string) => new ApiError(400, { error: text });

/** 400 for record validation: `{"message": {"path": ["has already been taken"]}}`. */
export const validationFailed = (errors: Record<string, string[]>) => new ApiError(400, { message: errors });

/** 422 when a record cannot be saved: GitLab's full messages, listed or joined in one sentence. */
export const unprocessable = (messages: string[] | string) => new ApiError(422, { message: messages });

export const unauthorized = () => new ApiError(401, { message: '401 Unauthorized' });
export const forbidden = (reason?: string) =>
  new ApiError(403, { message: reason ? `403 Forbidden - ${reason}` : '403 Forbidden' });
/** 404 naming the resource: notFound('Project') gives `{"message": "404 Project Not Found"}`. */
export const notFound = (resource?: string) =>
  new ApiError(404, { message: resource ? `404 ${resource} Not Found` : '404 Not Found' });
/** A record looked up by its own key that is not there, in ActiveRecord's words (`404 Not found`). */
export const recordNotFound = () => new ApiError(404, { message: '404 Not found' });
export const routeNotFound = () => new ApiError(404, { error: '404 Not Found' });
export const methodNotAllowed = (message = '405 Method Not Allowed') => new ApiError(405, { message });
export const conflict = (message: string) => new ApiError(409, { message });
/** The database is unreachable or too slow: GitLab's answer when a backend is down. */
export const serviceUnavailable = () => new ApiError(503, { message: '503 Service Unavailable' });
export const internalError = () => new ApiError(500, { message: '500 Internal Server Error' });

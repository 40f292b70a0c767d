/**
 * The one catalogue of API error codes. Every error body the server sends carries one of these
 * codes, and the renderer maps them to messages. `test/shared/error-codes.test.ts` checks that
 * every code is documented in docs/API.md.
 */
export const ERROR_CODES = {
  VALIDATION_FAILED: { statusCode: 400, message: 'The request is not valid.' },
  MALFORMED_JSON: { statusCode: 400, message: 'The request body is not valid JSON.' },
  INVALID_QUERY: { statusCode: 400, message: 'A query parameter is not valid.' },
  INVALID_PAGE_TOKEN: { statusCode: 400, message: 'The page token is not valid for this query.' },
  INVALID_ARCHIVE: {
    statusCode: 400,
    message: 'The file is not an export ZIP this app can import; nothing was imported.',
  },
  ARCHIVE_HASH_MISMATCH: {
    statusCode: 400,
    message: 'A file in the ZIP is not the file it is named by; nothing was imported.',
  },
  ARCHIVE_FORMAT_TOO_NEW: {
    statusCode: 400,
    message: 'The export was made by a newer version of Portfolio Manager; update this one first.',
  },
  INVALID_CSV: {
    statusCode: 400,
    message: 'The file is not a CSV this app can import; nothing was imported.',
  },
  UNAUTHORIZED: { statusCode: 401, message: 'A valid session is required.' },
  SESSION_EXPIRED: { statusCode: 401, message: 'The session has expired; sign in again.' },
  INVALID_CREDENTIALS: { statusCode: 401, message: 'Wrong username or password.' },
  DEVICE_REVOKED: {
    statusCode: 401,
    message: 'This device was signed out of the hub; sign in again.',
  },
  FORBIDDEN: { statusCode: 403, message: 'Your role does not allow this action.' },
  DEVICE_TOKEN_NOT_ALLOWED: {
    statusCode: 403,
    message: 'A device token is only for sync; sign in with a password to do this.',
  },
  FORBIDDEN_FIELD: { statusCode: 403, message: 'Only an admin may set this field.' },
  CATEGORY_NOT_ALLOWED: {
    statusCode: 403,
    message: 'You may not edit portfolios of this category.',
  },
  CLIENT_HEADER_REQUIRED: {
    statusCode: 403,
    message:
      'A change made with the sign-in cookie must come from the app itself (it sends the X-Portfolio-Client header).',
  },
  HOST_NOT_ALLOWED: {
    statusCode: 403,
    message: 'This server only answers requests for a loopback host name.',
  },
  ROUTE_NOT_FOUND: { statusCode: 404, message: 'No such endpoint.' },
  PORTFOLIO_NOT_FOUND: { statusCode: 404, message: 'No such portfolio.' },
  USER_NOT_FOUND: { statusCode: 404, message: 'No such user.' },
  FILE_NOT_FOUND: { statusCode: 404, message: 'No such file.' },
  DEVICE_NOT_FOUND: { statusCode: 404, message: 'No such device.' },
  SHARE_NOT_FOUND: {
    statusCode: 404,
    message: 'No such share link for this portfolio; it may be revoked already.',
  },
  CONFLICT_NOT_FOUND: { statusCode: 404, message: 'No such conflict; it may be resolved already.' },
  UNDO_NOT_FOUND: {
    statusCode: 404,
    message: 'This action can no longer be undone (it was undone already, or is over an hour old).',
  },
  REVISION_NOT_FOUND: { statusCode: 404, message: 'No such revision of this portfolio is kept.' },
  BLOB_NOT_FOUND: { statusCode: 404, message: 'The server has no blob with this SHA-256.' },
  BLOB_HASH_MISMATCH: {
    statusCode: 400,
    message: 'The bytes sent do not have the SHA-256 they were sent as; nothing was kept.',
  },
  UPLOAD_OFFSET_MISMATCH: {
    statusCode: 409,
    message: 'The upload does not continue where the kept part ends; see Upload-Offset.',
  },
  ID_TAKEN: { statusCode: 409, message: 'The specified identifier is already taken.' },
  USERNAME_TAKEN: { statusCode: 409, message: 'That username is already taken.' },
  REVISION_CONFLICT: { statusCode: 409, message: 'The portfolio was changed by someone else.' },
  REPLICA_ID_TAKEN: {
    statusCode: 409,
    message: 'This replica id belongs to another device; sign in to the hub again.',
  },
  LAST_ADMIN: { statusCode: 409, message: 'The last admin cannot be deleted or demoted.' },
  RESYNC_REQUIRED: {
    statusCode: 410,
    message: 'Changes that old are no longer known; start again from since=0.',
  },
  ARCHIVE_TOO_LARGE: {
    statusCode: 413,
    message: 'The ZIP, or a file in it, is larger than an import may be; nothing was imported.',
  },
  CSV_ROW_TOO_LARGE: {
    statusCode: 413,
    message: 'A row of the CSV is longer than an import takes; nothing was imported.',
  },
  BULK_TOO_MANY: {
    statusCode: 413,
    message: 'One bulk edit changes at most 1,000 portfolios; narrow the selection.',
  },
  PAYLOAD_TOO_LARGE: { statusCode: 413, message: 'The request is too large.' },
  TOO_MANY_FILES: { statusCode: 413, message: 'The file list is full.' },
  IMAGE_TOO_LARGE: { statusCode: 413, message: 'The image has too many pixels.' },
  UPLOAD_QUOTA_EXCEEDED: {
    statusCode: 413,
    message: 'You have too many uploads waiting for a change that uses them.',
  },
  RESPONSE_TOO_LARGE: {
    statusCode: 413,
    message:
      'The answer would inline too much file data; select fields without data, or fetch the files from their URLs.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    statusCode: 415,
    message: 'The request content type is not supported.',
  },
  UNSUPPORTED_FILE_TYPE: { statusCode: 415, message: 'This type of file is not accepted here.' },
  REQUEST_TIMEOUT: {
    statusCode: 408,
    message: 'The request took too long to arrive; send it again.',
  },
  RANGE_NOT_SATISFIABLE: {
    statusCode: 416,
    message: 'The requested byte range lies outside the file.',
  },
  TOO_MANY_ATTEMPTS: {
    statusCode: 429,
    message: 'Too many failed sign-in attempts; try again later.',
  },
  RATE_LIMITED: { statusCode: 429, message: 'Too many requests; slow down.' },
  STORAGE_FAILURE: {
    statusCode: 500,
    message: 'The change could not be saved; nothing was changed.',
  },
  INTERNAL: { statusCode: 500, message: 'Something went wrong on the server.' },
  DATABASE_UNAVAILABLE: {
    statusCode: 503,
    message: 'The database cannot be reached; try again shortly.',
  },
  // Replica side of sync (DESIGN §10): the control API says what went wrong with the hub.
  HUB_UNREACHABLE: {
    statusCode: 400,
    message: 'The hub cannot be reached; check its address and the network.',
  },
  HUB_NOT_PORTFOLIO: {
    statusCode: 400,
    message: 'That address is not a Portfolio Manager server.',
  },
  HUB_TOO_OLD: { statusCode: 400, message: 'The hub is too old for this app; update the hub.' },
  HUB_SIGN_IN_FAILED: { statusCode: 401, message: 'Wrong username or password on the hub.' },
  HUB_ERROR: { statusCode: 502, message: 'The hub failed to answer; sync will try again.' },
  SYNC_DEVICE_REVOKED: {
    statusCode: 401,
    message: 'This device was signed out of the hub; sign in again.',
  },
  SYNC_REPLICA_ID_TAKEN: {
    statusCode: 409,
    message: 'Another device syncs with this replica id; sign in again.',
  },
  SYNC_NOT_CONFIGURED: { statusCode: 404, message: 'No team server is set up.' },
  SYNC_UNAVAILABLE: {
    statusCode: 404,
    message: 'This storage backend cannot be a sync replica.',
  },
  DISK_FULL: { statusCode: 507, message: 'The disk is full; free some space and try again.' },
  UPLOAD_SPACE_FULL: {
    statusCode: 507,
    message: 'The server has no room for more uploads right now; try again later.',
  },
  // Backups (DESIGN §11).
  BACKUP_RUNNING: { statusCode: 409, message: 'A backup is running already; wait for it to end.' },
  BACKUP_FAILED: { statusCode: 500, message: 'The backup failed; nothing was kept.' },
  BACKUP_NOT_FOUND: { statusCode: 404, message: 'There is no such backup in the backup folder.' },
} as const satisfies Record<string, { statusCode: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

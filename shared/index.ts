export * from './error-codes';
export * from './schemas/common';
export * from './schemas/error';
export * from './schemas/file';
export * from './schemas/portfolio';
export * from './schemas/session';
export * from './schemas/user';

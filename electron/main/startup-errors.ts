import { DataDirInUseError } from '../../server/storage/embedded/data-dir-lock';

export interface StartupErrorDialog {
  title: string;
  message: string;
}

/** What to tell the user when the embedded server cannot start, instead of a stack trace. */
export function startupErrorDialog(error: unknown, dataDir: string): StartupErrorDialog {
  if (error instanceof DataDirInUseError) {
    return {
      title: 'Data folder in use',
      message:
        `The data folder\n\n${dataDir}\n\nis being used by another Portfolio Manager process ` +
        `(pid ${error.ownerPid}), for example a headless server started with npm run serve. ` +
        'Only one program may open a data folder at a time.\n\nStop the other process and start ' +
        'the app again, or start it with PORTFOLIO_DATA_DIR set to another folder.',
    };
  }
  const detail = error instanceof Error ? error.message : String(error);
  return {
    title: 'Portfolio Manager could not start',
    message: `The embedded server could not start with the data folder\n\n${dataDir}\n\n${detail}`,
  };
}

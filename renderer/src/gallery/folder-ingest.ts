import type { FileSlot } from '../../../shared';

/** A file given by a drop or a folder picker, with its path inside what was given. */
export interface GivenFile {
  file: File;
  /** `Lake house/drafts/01.jpg`, or `01.jpg` for a loose file. */
  path: string;
}

export interface PlannedFile {
  file: File;
  /** The path inside its project folder. */
  name: string;
  slot: FileSlot;
}

/** One portfolio to make or add to: a folder's (title from its name), or the loose files'. */
export interface IngestGroup {
  /** The folder's name; null for loose files (the user gives the title). */
  folder: string | null;
  files: PlannedFile[];
}

export interface SkippedFile {
  path: string;
  reason: string;
}

const IMAGES = new Set(['jpg', 'jpeg', 'jpe', 'jfif', 'png', 'webp', 'gif', 'avif', 'tif', 'tiff']);
const DOCUMENTS = new Set([
  ...['pdf', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'rtf'],
  ...['txt', 'text', 'md', 'csv', 'zip'],
]);

const byName = (a: string, b: string) =>
  a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' });

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/**
 * The portfolios a set of files makes, as `portfolio ingest` does: one per folder (when a single
 * folder holding folders is given, each of those), loose files together; in each, sorted by name,
 * the first image the cover, other images the drafting process, documents additional documents.
 * The server sniffs every file again; this only decides places and leaves out what cannot fit.
 */
export function planIngest(given: GivenFile[]): { groups: IngestGroup[]; skipped: SkippedFile[] } {
  const parts = given.map((item) => item.path.split('/').filter(Boolean));
  const first = new Set(parts.map((segments) => segments[0]));
  const oneFolderOfFolders = first.size === 1 && parts.some((segments) => segments.length > 2);
  const skipped: SkippedFile[] = [];
  const groups = new Map<string | null, Array<{ file: File; name: string }>>();
  given.forEach((item, index) => {
    const segments = oneFolderOfFolders ? parts[index]!.slice(1) : parts[index]!;
    const name = segments.at(-1) ?? '';
    const reason = name.startsWith('.')
      ? 'hidden file'
      : item.file.size === 0
        ? 'empty file'
        : !IMAGES.has(extensionOf(name)) && !DOCUMENTS.has(extensionOf(name))
          ? 'not a kind of file a portfolio takes'
          : null;
    if (reason) return skipped.push({ path: item.path, reason });
    const folder = segments.length > 1 ? segments[0]! : null;
    const list = groups.get(folder) ?? [];
    list.push({ file: item.file, name: segments.slice(folder === null ? 0 : 1).join('/') });
    groups.set(folder, list);
  });
  const planned = [...groups].map(([folder, files]) => {
    files.sort((a, b) => byName(a.name, b.name));
    const cover = files.find((item) => IMAGES.has(extensionOf(item.name)));
    return {
      folder,
      files: files.map((item) => ({
        ...item,
        slot: (item === cover
          ? 'cover'
          : IMAGES.has(extensionOf(item.name))
            ? 'draftingProcess'
            : 'additionalDocument') as FileSlot,
      })),
    };
  });
  planned.sort((a, b) =>
    a.folder === null ? -1 : b.folder === null ? 1 : byName(a.folder, b.folder),
  );
  return { groups: planned, skipped };
}

/** The files picked with a folder picker (`webkitdirectory`): paths below the folder picked. */
export function givenByPicker(files: FileList | File[]): GivenFile[] {
  return [...files].map((file) => ({ file, path: file.webkitRelativePath || file.name }));
}

/**
 * The files of a drop, walking dropped folders (webkitGetAsEntry). Read before the drop event
 * returns, as the browser empties the DataTransfer after it.
 */
export async function givenByDrop(data: DataTransfer): Promise<GivenFile[]> {
  const entries = [...data.items]
    .map((item) => (item.kind === 'file' ? item.webkitGetAsEntry() : null))
    .filter((entry): entry is FileSystemEntry => entry !== null);
  if (entries.length === 0) return [...data.files].map((file) => ({ file, path: file.name }));
  const found: GivenFile[] = [];
  for (const entry of entries) await walk(entry, found);
  return found;
}

async function walk(entry: FileSystemEntry, found: GivenFile[]): Promise<void> {
  const path = entry.fullPath.replace(/^\//, '');
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) =>
      (entry as FileSystemFileEntry).file(resolve, reject),
    );
    found.push({ file, path });
    return;
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries answers a batch at a time, and an empty one at the end.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) =>
      reader.readEntries(resolve, reject),
    );
    if (batch.length === 0) break;
    for (const child of batch) await walk(child, found);
  }
}

import { describe, expect, it } from 'vitest';
import { fileTypeName } from '../../shared';

describe('fileTypeName', () => {
  it('names the types people meet in words, never as a media type', () => {
    expect(fileTypeName('image/jpeg', 'jpg')).toBe('JPEG image');
    expect(fileTypeName('application/pdf', 'pdf')).toBe('PDF document');
    expect(
      fileTypeName(
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        'docx',
      ),
    ).toBe('Word document');
    expect(fileTypeName('text/plain; charset=utf-8', 'txt')).toBe('Text file');
  });

  it('falls back to the extension and family, then to "File"', () => {
    expect(fileTypeName('image/heic', 'heic')).toBe('HEIC image');
    expect(fileTypeName('video/x-matroska', '.mkv')).toBe('MKV video');
    expect(fileTypeName('application/x-msdownload', 'exe')).toBe('EXE file');
    expect(fileTypeName('application/octet-stream', '')).toBe('File');
    expect(fileTypeName(undefined)).toBe('File');
    for (const name of [fileTypeName('image/x-unknown', ''), fileTypeName('application/x-y')])
      expect(name).not.toContain('/');
  });
});

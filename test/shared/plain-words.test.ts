import { describe, expect, it } from 'vitest';
import { fileKindName, waitInWords } from '../../shared';

describe('plain words', () => {
  it('says a wait in its largest unit, rounded up', () => {
    expect(waitInWords(900)).toBe('15 minutes');
    expect(waitInWords(899.2)).toBe('15 minutes');
    expect(waitInWords(61)).toBe('2 minutes');
    expect(waitInWords(60)).toBe('1 minute');
    expect(waitInWords(1)).toBe('1 second');
    expect(waitInWords(0.2)).toBe('1 second');
    expect(waitInWords(45)).toBe('45 seconds');
    expect(waitInWords(3600)).toBe('1 hour');
    expect(waitInWords(5400)).toBe('2 hours');
  });

  it('names a file by its kind, never by its MIME type', () => {
    expect(fileKindName('application/x-msdownload', 'exe')).toBe('a Windows program');
    expect(fileKindName('application/pdf', 'pdf')).toBe('a PDF document');
    expect(fileKindName('video/mp4', 'mp4')).toBe('an MP4 video');
    expect(fileKindName('audio/mpeg', 'mp3')).toBe('an MP3 sound file');
    expect(fileKindName('image/x-unknown', 'xyz')).toBe('an XYZ image');
    expect(fileKindName('application/x-unknown', 'bin')).toBe('a .bin file');
    expect(fileKindName('application/octet-stream')).toBe(
      'a file of a kind this library does not know',
    );
  });
});

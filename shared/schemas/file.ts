import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common';

export const DimensionSchema = Type.Union(
  [Type.Object({ width: Type.Integer(), height: Type.Integer() }), Type.Null()],
  { description: 'Pixel size after EXIF orientation; null for files that are not images' },
);

const fileFields = {
  originalFilename: Type.String(),
  fullFileExtension: Type.String({
    description: 'Lower-case extension without the dot, from the sniffed type',
  }),
  mimeType: Type.String({ description: 'Sniffed from the bytes, never taken from the client' }),
  description: Type.String(),
  createdTime: Timestamp,
  modifiedTime: Timestamp,
  md5Checksum: Type.String({ description: 'Hex MD5 of the bytes' }),
  size: Type.Integer({ description: 'Bytes' }),
  data: Type.Optional(
    Type.String({
      description: 'Base64 content; left out by upload answers and by field selection',
    }),
  ),
  dimention: DimensionSchema,
};

/** The cover's File object: its id key is `fileId`. */
export const CoverFileSchema = Type.Object({ fileId: Type.String(), ...fileFields });
/** Items of draftingProcess and additionalDocument: their id key is spelled `fileID`. */
export const ListFileSchema = Type.Object({ fileID: Type.String(), ...fileFields });

export const FILE_SLOTS = ['cover', 'draftingProcess', 'additionalDocument'] as const;
export type FileSlot = (typeof FILE_SLOTS)[number];

/** How a file is kept in the store: metadata and the sha256 that addresses its blob. */
export const StoredFileSchema = Type.Object({
  fileId: Type.String(),
  originalFilename: Type.String(),
  fullFileExtension: Type.String(),
  mimeType: Type.String(),
  description: Type.String(),
  createdTime: Timestamp,
  modifiedTime: Timestamp,
  md5Checksum: Type.String(),
  sha256: Type.String(),
  size: Type.Integer(),
  dimention: DimensionSchema,
});

export const FileDescriptionSchema = Type.String({ maxLength: 1000 });

export type CoverFile = Static<typeof CoverFileSchema>;
export type ListFile = Static<typeof ListFileSchema>;
export type StoredFile = Static<typeof StoredFileSchema>;

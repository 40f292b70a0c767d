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
export const CoverFileSchema = Type.Object(
  { fileId: Type.String(), ...fileFields },
  { $id: 'CoverFile' },
);
/** Items of draftingProcess and additionalDocument: their id key is spelled `fileID`. */
export const ListFileSchema = Type.Object(
  { fileID: Type.String(), ...fileFields },
  { $id: 'ListFile' },
);

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

/** A file's description: at most this many characters. */
export const FILE_DESCRIPTION_LIMIT = 1000;
export const FileDescriptionSchema = Type.String({ maxLength: FILE_DESCRIPTION_LIMIT });

export type CoverFile = Static<typeof CoverFileSchema>;
export type ListFile = Static<typeof ListFileSchema>;
export type StoredFile = Static<typeof StoredFileSchema>;

/** JSON upload: the same file as a multipart upload, its bytes in base64. */
export const FileUploadBodySchema = Type.Object(
  {
    originalFilename: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'Kept as its last path segment, at most 255 characters',
    }),
    description: Type.Optional(FileDescriptionSchema),
    data: Type.String({
      description: 'Base64 bytes (a "data:…;base64," prefix is allowed); at most the file limit',
    }),
  },
  { $id: 'FileUploadBody', additionalProperties: false },
);

export const FileDescriptionBodySchema = Type.Object(
  { description: FileDescriptionSchema },
  { $id: 'FileDescriptionBody', additionalProperties: false },
);

export const FileParamsSchema = Type.Object({
  portfolioId: Type.String({ minLength: 1, maxLength: 64 }),
  fileId: Type.String({ minLength: 1, maxLength: 64 }),
});

/** Thumbnail widths the server makes; a bounded set keeps the on-disk cache bounded. */
export const THUMBNAIL_WIDTHS = [64, 128, 256, 512, 1024] as const;

export const ThumbnailQuerySchema = Type.Object(
  {
    width: Type.Optional(
      Type.Integer({
        minimum: 1,
        default: 256,
        description: `One of ${THUMBNAIL_WIDTHS.join(', ')}`,
      }),
    ),
  },
  { additionalProperties: false },
);

export type FileUploadBody = Static<typeof FileUploadBodySchema>;
export type FileDescriptionBody = Static<typeof FileDescriptionBodySchema>;

/** A file id as a request body names one. */
const FileIdSchema = Type.String({ minLength: 1, maxLength: 64 });
/** How many file ids one request may name: far above any list limit, a bound on the body. */
const FILE_IDS_PER_REQUEST = 1000;

/** The drafting process in a new order: every one of its file ids, each once. */
export const FileOrderBodySchema = Type.Object(
  {
    fileIds: Type.Array(FileIdSchema, {
      maxItems: FILE_IDS_PER_REQUEST,
      description: 'Every drafting-process file id, each exactly once, in the new order',
    }),
  },
  { $id: 'FileOrderBody', additionalProperties: false },
);

/** One description given to several files of one portfolio at once. */
export const FilesDescriptionBodySchema = Type.Object(
  {
    fileIds: Type.Array(FileIdSchema, {
      minItems: 1,
      maxItems: FILE_IDS_PER_REQUEST,
      description: 'The files to describe, in any slot',
    }),
    description: FileDescriptionSchema,
  },
  { $id: 'FilesDescriptionBody', additionalProperties: false },
);

/** The drafting process after a reorder. */
export const DraftingOrderAnswerSchema = Type.Object(
  { draftingProcess: Type.Array(ListFileSchema), revision: Type.Integer() },
  { $id: 'DraftingOrderAnswer' },
);

/** The cover and the drafting process after a drafting image became the cover. */
export const CoverChoiceAnswerSchema = Type.Object(
  {
    cover: CoverFileSchema,
    draftingProcess: Type.Array(ListFileSchema),
    revision: Type.Integer(),
  },
  { $id: 'CoverChoiceAnswer' },
);

/** The files described, each in its slot's spelling, and the revision that holds them. */
export const FilesDescriptionAnswerSchema = Type.Object(
  {
    files: Type.Array(Type.Union([CoverFileSchema, ListFileSchema])),
    revision: Type.Integer(),
  },
  { $id: 'FilesDescriptionAnswer' },
);

export type FileOrderBody = Static<typeof FileOrderBodySchema>;
export type FilesDescriptionBody = Static<typeof FilesDescriptionBodySchema>;

import { Type, type Static } from '@sinclair/typebox';
import { CSV_ACTIONS, CSV_KEYS } from '../csv-import';

export const CsvImportQuerySchema = Type.Object(
  {
    dryRun: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'true: report what each row would do and change nothing',
      }),
    ),
    mapping: Type.Optional(
      Type.String({
        maxLength: 20_000,
        description:
          'JSON object {"<column header>":"<field>"}; without it, headers that name a field ' +
          '(its key or its label, any case) map to it',
      }),
    ),
    key: Type.Optional(
      Type.Union(
        CSV_KEYS.map((key) => Type.Literal(key)),
        {
          description:
            'What matches a row to a portfolio; default portfolioId when a column maps to it, ' +
            'memberBarcode,projectTitle otherwise',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const count = (description: string) => Type.Integer({ minimum: 0, description });

export const CsvImportReportSchema = Type.Object(
  {
    rows: Type.Array(
      Type.Object({
        row: Type.Integer({ minimum: 1, description: 'The data row, counted from 1' }),
        action: Type.Union(
          CSV_ACTIONS.map((action) => Type.Literal(action)),
          { description: 'What the row did (or, in a dry run, would do)' },
        ),
        portfolioId: Type.Optional(Type.String()),
        errors: Type.Array(
          Type.Object({
            field: Type.String({ description: 'The field (or column) at fault; "" for the row' }),
            message: Type.String(),
          }),
        ),
      }),
    ),
    counts: Type.Object({
      create: count('Rows that made (would make) a new portfolio'),
      update: count('Rows that changed (would change) a portfolio'),
      unchanged: count('Rows whose portfolio already holds their values'),
      refused: count('Rows left out, each with its errors'),
    }),
    mapping: Type.Record(Type.String(), Type.String(), {
      description: 'The mapping used: column header → field',
    }),
    ignoredColumns: Type.Array(Type.String(), {
      description: 'Headers that map to no field; their cells were not read',
    }),
    dryRun: Type.Boolean(),
  },
  { $id: 'CsvImportReport' },
);

export type CsvImportQuery = Static<typeof CsvImportQuerySchema>;
export type CsvImportReport = Static<typeof CsvImportReportSchema>;
export type CsvImportRow = CsvImportReport['rows'][number];

import { type FormEvent, useEffect, useRef, useState } from 'react';
import { SanitizedHtml } from '../components/SanitizedHtml';
import { SelectField } from '../components/SelectField';
import { TagInput } from '../components/TagInput';
import { TextField } from '../components/TextField';
import { usePickLists } from './use-facets';
import {
  type FieldErrors,
  type FormField,
  type PortfolioFormValues,
  FIELD_LABELS,
  maxLengthOf,
  validate,
} from './portfolio-form-model';

interface PortfolioFormProps {
  values: PortfolioFormValues;
  onChange(values: PortfolioFormValues): void;
  /** Errors from the server's last answer, keyed by form field. */
  serverErrors: FieldErrors;
  /** A message for the whole form (a 403, a network failure). */
  formError: string | null;
  showAdminFields: boolean;
  /**
   * The categories the user may choose (shared/permissions.ts `editableCategories`); null lets
   * the user type any category.
   */
  categoryChoices: readonly string[] | null;
  submitLabel: string;
  busy: boolean;
  onSubmit(): void;
  onCancel(): void;
}

/** Every interface field with its control; validation shows inline once a field was touched or on submit. */
export function PortfolioForm({
  values,
  onChange,
  serverErrors,
  formError,
  showAdminFields,
  categoryChoices,
  submitLabel,
  busy,
  onSubmit,
  onCancel,
}: PortfolioFormProps) {
  const [touched, setTouched] = useState<Partial<Record<FormField, boolean>>>({});
  const [submitted, setSubmitted] = useState(false);
  const [focusRequest, setFocusRequest] = useState(0);
  const formRef = useRef<HTMLFormElement>(null);
  const localErrors = validate(values);
  const pickLists = usePickLists();

  const errorOf = (field: FormField): string | undefined =>
    (submitted || touched[field] ? localErrors[field] : undefined) ?? serverErrors[field];

  function set<K extends FormField>(field: K, value: PortfolioFormValues[K]) {
    setTouched((current) => (current[field] ? current : { ...current, [field]: true }));
    onChange({ ...values, [field]: value });
  }

  // After a refused submit has rendered its messages, take the user to the first problem.
  useEffect(() => {
    if (focusRequest > 0)
      formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [focusRequest]);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSubmitted(true);
    if (Object.keys(localErrors).length > 0) {
      setFocusRequest((count) => count + 1);
      return;
    }
    onSubmit();
  }

  const text = (
    field:
      | 'memberBarcode'
      | 'category'
      | 'projectTitle'
      | 'projectDetail'
      | 'aboutProject'
      | 'projectLanuching'
      | 'readyToBuy',
    extra: { required?: boolean; multiline?: boolean; hint?: string; rows?: number } = {},
  ) => (
    <TextField
      name={field}
      label={FIELD_LABELS[field]}
      value={values[field]}
      onChange={(value) => set(field, value)}
      limit={maxLengthOf(field)}
      error={errorOf(field)}
      suggestions={field === 'category' || field === 'readyToBuy' ? pickLists[field] : undefined}
      {...extra}
    />
  );

  const tags = (
    field: 'relativeCategory' | 'occasion' | 'referenceStyling' | 'generalTag' | 'certificateByOrg',
    hint?: string,
  ) => (
    <TagInput
      name={field}
      label={FIELD_LABELS[field]}
      values={values[field]}
      onChange={(next) => set(field, next)}
      error={errorOf(field)}
      hint={hint}
      suggestions={
        field === 'occasion' || field === 'generalTag' || field === 'certificateByOrg'
          ? pickLists[field]
          : undefined
      }
    />
  );

  const problemCount = submitted ? Object.keys(localErrors).length : 0;

  return (
    <form
      ref={formRef}
      className="portfolio-form"
      onSubmit={submit}
      noValidate
      aria-label="Portfolio"
    >
      {formError && (
        <p className="form-error" role="alert">
          {formError}
        </p>
      )}
      {problemCount > 0 && (
        <p className="form-error" role="alert">
          {problemCount === 1
            ? 'One field needs attention.'
            : `${problemCount} fields need attention.`}
        </p>
      )}
      <p className="muted">
        Fields marked <span className="required-mark">*</span> are required.
      </p>

      <fieldset>
        <legend>Project</legend>
        {text('projectTitle', { required: true })}
        <div className="field-row">
          {text('memberBarcode', { required: true, hint: 'Letters, digits, ".", "-" and "_".' })}
          {categoryChoices === null ? (
            text('category', { required: true })
          ) : (
            <SelectField
              name="category"
              label={FIELD_LABELS.category}
              value={values.category}
              options={categoryChoices}
              onChange={(value) => set('category', value)}
              placeholder="Choose a category"
              error={errorOf('category')}
              hint="The categories you may edit."
              required
            />
          )}
        </div>
        {tags('relativeCategory')}
        {text('projectDetail', { required: true, multiline: true, rows: 6 })}
        {text('aboutProject', { multiline: true, rows: 4 })}
      </fieldset>

      <fieldset>
        <legend>Market</legend>
        <div className="field-row">
          {text('projectLanuching', { hint: 'When or how the project launches.' })}
          {text('readyToBuy')}
        </div>
        {tags('occasion')}
        {tags('referenceStyling')}
        {tags('generalTag')}
      </fieldset>

      {showAdminFields && (
        <fieldset>
          <legend>Admin</legend>
          <label className="switch">
            <input
              type="checkbox"
              name="staffPick"
              checked={values.staffPick}
              onChange={(event) => set('staffPick', event.target.checked)}
            />
            <span>{FIELD_LABELS.staffPick}</span>
          </label>
          {tags('certificateByOrg')}
          <div className="html-editor">
            <TextField
              name="certificateDesc"
              label={FIELD_LABELS.certificateDesc}
              value={values.certificateDesc}
              onChange={(value) => set('certificateDesc', value)}
              multiline
              rows={8}
              limit={maxLengthOf('certificateDesc')}
              error={errorOf('certificateDesc')}
              hint="HTML. Scripts, styles and unsafe attributes are removed; the preview shows what will be displayed."
              className="mono-input"
            />
            <section className="html-preview" aria-labelledby="certificate-preview-heading">
              <h3 id="certificate-preview-heading">Preview</h3>
              {values.certificateDesc.trim() ? (
                <SanitizedHtml
                  html={values.certificateDesc}
                  label="Certificate description preview"
                />
              ) : (
                <p className="muted">Nothing to preview yet.</p>
              )}
            </section>
          </div>
        </fieldset>
      )}

      <div className="form-actions">
        <button type="submit" className="button button--primary" disabled={busy}>
          {busy ? 'Saving…' : submitLabel}
        </button>
        <button type="button" className="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

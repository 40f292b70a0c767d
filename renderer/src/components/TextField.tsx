import { useId } from 'react';
import { characterCount } from './character-count';
import { PickList } from './PickList';

interface TextFieldProps {
  label: string;
  value: string;
  onChange(value: string): void;
  name?: string;
  required?: boolean;
  multiline?: boolean;
  rows?: number;
  /**
   * The most characters the field may hold. Shown as a counter as one types; the text may
   * exceed it (never cut), and the form refuses to save until it fits.
   */
  limit?: number;
  error?: string;
  hint?: string;
  autoComplete?: string;
  type?: 'text' | 'password';
  className?: string;
  /** Values in use to offer while typing (a single-line field only); any other may be typed. */
  suggestions?: readonly string[];
}

/** A labelled input or textarea with its hint and inline error wired for assistive technology. */
export function TextField({
  label,
  value,
  onChange,
  name,
  required,
  multiline,
  rows = 5,
  limit,
  error,
  hint,
  autoComplete,
  type = 'text',
  className,
  suggestions,
}: TextFieldProps) {
  const id = useId();
  const listId = `${id}-list`;
  const offered = !multiline && suggestions !== undefined && suggestions.length > 0;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const counterId = `${id}-counter`;
  const over = limit !== undefined && value.length > limit;
  const describedBy =
    [hint ? hintId : '', limit !== undefined ? counterId : '', error ? errorId : '']
      .filter(Boolean)
      .join(' ') || undefined;
  const common = {
    id,
    name,
    value,
    required,
    autoComplete,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
  };
  return (
    <div className={`field ${error ? 'field--invalid' : ''} ${className ?? ''}`}>
      <label className="field-label" htmlFor={id}>
        {label}
        {required && (
          <span className="required-mark" aria-hidden="true">
            {' '}
            *
          </span>
        )}
      </label>
      {multiline ? (
        <textarea {...common} rows={rows} onChange={(event) => onChange(event.target.value)} />
      ) : (
        <input
          {...common}
          type={type}
          list={offered ? listId : undefined}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
      {offered && <PickList id={listId} options={suggestions} />}
      {hint && (
        <p className="field-hint" id={hintId}>
          {hint}
        </p>
      )}
      {limit !== undefined && (
        <p className={`field-counter ${over ? 'field-counter--over' : ''}`} id={counterId}>
          {characterCount(value.length, limit)}
        </p>
      )}
      {error && (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  );
}

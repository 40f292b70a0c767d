import { useId } from 'react';

interface TextFieldProps {
  label: string;
  value: string;
  onChange(value: string): void;
  name?: string;
  required?: boolean;
  multiline?: boolean;
  rows?: number;
  maxLength?: number;
  error?: string;
  hint?: string;
  autoComplete?: string;
  type?: 'text' | 'password';
  className?: string;
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
  maxLength,
  error,
  hint,
  autoComplete,
  type = 'text',
  className,
}: TextFieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy =
    [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name,
    value,
    required,
    maxLength,
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
        <input {...common} type={type} onChange={(event) => onChange(event.target.value)} />
      )}
      {hint && (
        <p className="field-hint" id={hintId}>
          {hint}
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

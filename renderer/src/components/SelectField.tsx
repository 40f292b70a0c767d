import { useId } from 'react';

interface SelectFieldProps {
  label: string;
  value: string;
  options: readonly string[];
  onChange(value: string): void;
  name?: string;
  required?: boolean;
  /** Shown as the empty first choice while nothing is chosen. */
  placeholder?: string;
  error?: string;
  hint?: string;
}

/** A labelled choice among fixed options, wired like TextField for hints and errors. */
export function SelectField({
  label,
  value,
  options,
  onChange,
  name,
  required,
  placeholder,
  error,
  hint,
}: SelectFieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy =
    [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field ${error ? 'field--invalid' : ''}`}>
      <label className="field-label" htmlFor={id}>
        {label}
        {required && (
          <span className="required-mark" aria-hidden="true">
            {' '}
            *
          </span>
        )}
      </label>
      <select
        id={id}
        name={name}
        value={value}
        required={required}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
        onChange={(event) => onChange(event.target.value)}
      >
        {(value === '' || !options.includes(value)) && (
          <option value={value}>{value === '' ? (placeholder ?? '') : value}</option>
        )}
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
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

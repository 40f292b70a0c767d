import { type KeyboardEvent, useId, useState } from 'react';
import { PickList } from './PickList';

interface TagInputProps {
  label: string;
  values: string[];
  onChange(values: string[]): void;
  error?: string;
  hint?: string;
  name?: string;
  /** Values in use to offer while typing (those already added are left out). */
  suggestions?: readonly string[];
}

/**
 * A list of short strings as removable chips. Enter or comma adds what was typed, Backspace
 * in an empty box removes the last one; leaving the box keeps a half-typed entry too, so a
 * tag is never lost by clicking Save straight away.
 */
export function TagInput({
  label,
  values,
  onChange,
  error,
  hint,
  name,
  suggestions = [],
}: TagInputProps) {
  const [draft, setDraft] = useState('');
  const inputId = useId();
  const listId = useId();
  const offered = suggestions.filter((value) => !values.includes(value));
  const hintId = useId();
  const errorId = useId();

  function commit(text: string) {
    const additions = text
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part && !values.includes(part));
    if (additions.length > 0) onChange([...values, ...new Set(additions)]);
    setDraft('');
  }

  function onKeyDown(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === 'Enter' || event.key === ',') {
      event.preventDefault();
      commit(draft);
    } else if (event.key === 'Backspace' && draft === '' && values.length > 0) {
      onChange(values.slice(0, -1));
    }
  }

  const describedBy =
    [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field tag-field ${error ? 'field--invalid' : ''}`}>
      <label className="field-label" htmlFor={inputId}>
        {label}
      </label>
      <div className="tag-box">
        {values.length > 0 && (
          <ul className="tag-list" aria-label={`${label} entries`}>
            {values.map((value) => (
              <li key={value} className="tag">
                <span>{value}</span>
                <button
                  type="button"
                  className="tag-remove"
                  aria-label={`Remove ${value} from ${label}`}
                  onClick={() => onChange(values.filter((item) => item !== value))}
                >
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        <input
          id={inputId}
          name={name}
          value={draft}
          list={offered.length > 0 ? listId : undefined}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onKeyDown}
          onBlur={() => commit(draft)}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
          placeholder="Type and press Enter"
        />
        {offered.length > 0 && <PickList id={listId} options={offered} />}
      </div>
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

import { type Ref, useEffect, useId, useState } from 'react';
import { PickList } from './PickList';

interface DebouncedTextFieldProps {
  label: string;
  value: string;
  onCommit(value: string): void;
  type?: 'search' | 'text';
  placeholder?: string;
  delayMs?: number;
  inputRef?: Ref<HTMLInputElement>;
  /** A key that focuses the field, for assistive technology to announce (aria-keyshortcuts). */
  keyShortcut?: string;
  /** Values in use to offer while typing; any other may be typed. */
  suggestions?: readonly string[];
}

/** A text input that reports its value once typing pauses, and follows outside changes (Back). */
export function DebouncedTextField({
  label,
  value,
  onCommit,
  type = 'text',
  placeholder,
  delayMs = 300,
  inputRef,
  keyShortcut,
  suggestions = [],
}: DebouncedTextFieldProps) {
  const listId = useId();
  const [draft, setDraft] = useState(value);
  const [shown, setShown] = useState(value);
  if (value !== shown) {
    // The URL changed under us (navigation, "clear filters"): show the new value.
    setShown(value);
    setDraft(value);
  }

  useEffect(() => {
    if (draft === value) return;
    const timer = window.setTimeout(() => onCommit(draft), delayMs);
    return () => window.clearTimeout(timer);
  }, [draft, value, onCommit, delayMs]);

  return (
    <label className="field field--compact">
      <span className="field-label">{label}</span>
      <input
        ref={inputRef}
        aria-keyshortcuts={keyShortcut}
        type={type}
        value={draft}
        placeholder={placeholder}
        list={suggestions.length > 0 ? listId : undefined}
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter') onCommit(draft);
        }}
      />
      {suggestions.length > 0 && <PickList id={listId} options={suggestions} />}
    </label>
  );
}

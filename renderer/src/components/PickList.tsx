/**
 * The values a text box offers as it is typed in (a native datalist: the browser's own
 * suggestions, reached with the arrow keys, announced by screen readers); any other value can
 * still be typed.
 */
export function PickList({ id, options }: { id: string; options: readonly string[] }) {
  return (
    <datalist id={id}>
      {options.map((option) => (
        <option key={option} value={option} />
      ))}
    </datalist>
  );
}

interface StatusBadgesProps {
  published?: boolean;
  active?: boolean;
  staffPick?: boolean;
  /** Open sync conflicts: someone must choose between two values. */
  conflicts?: number;
}

/**
 * Badges only for what deserves attention: sync conflicts, staff picks, drafts and deactivated
 * portfolios.
 */
export function StatusBadges({ published, active, staffPick, conflicts = 0 }: StatusBadgesProps) {
  const badges: { label: string; tone: string }[] = [];
  if (conflicts > 0)
    badges.push({
      label: conflicts === 1 ? 'Conflict' : `${conflicts} conflicts`,
      tone: 'conflict',
    });
  if (staffPick) badges.push({ label: 'Staff pick', tone: 'pick' });
  if (published === false) badges.push({ label: 'Unpublished', tone: 'draft' });
  if (active === false) badges.push({ label: 'Inactive', tone: 'inactive' });
  if (badges.length === 0) return null;
  return (
    <ul className="badges" aria-label="Status">
      {badges.map((badge) => (
        <li key={badge.label} className={`badge badge--${badge.tone}`}>
          {badge.label}
        </li>
      ))}
    </ul>
  );
}

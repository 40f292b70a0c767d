interface StatusBadgesProps {
  published?: boolean;
  active?: boolean;
  staffPick?: boolean;
}

/** Badges only for what deserves attention: staff picks, drafts and deactivated portfolios. */
export function StatusBadges({ published, active, staffPick }: StatusBadgesProps) {
  const badges: { label: string; tone: string }[] = [];
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

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { ROLES, type Role, type User } from '../../../shared';
import { ApiError, describeError } from '../api/api-error';
import { queryKeys } from '../api/query-keys';
import { createUser, deleteUser, listUsers, unlockUser, updateUser } from '../api/users-api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { TagInput } from '../components/TagInput';
import { TextField } from '../components/TextField';
import { useDocumentTitle } from '../components/use-document-title';
import { useToast } from '../components/use-toast';
import { formatDate } from '../lib/format';
import { isAdmin } from '../session/permissions';
import { useUser } from '../session/use-session';
import { UserDevices } from '../sync/UserDevices';

const ROLE_LABELS: Record<Role, string> = {
  viewer: 'Viewer — sees published portfolios',
  editor: 'Editor — creates and edits allowed categories',
  admin: 'Admin — everything, including users',
};

const ALLOW_EDIT_HINT =
  'Categories this user may edit; "*" means all. Admins may edit every category.';

function RoleSelect(props: {
  id: string;
  label: string;
  value: Role;
  onChange: (role: Role) => void;
}) {
  return (
    <div className="field">
      <label className="field-label" htmlFor={props.id}>
        {props.label}
      </label>
      <select
        id={props.id}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value as Role)}
      >
        {ROLES.map((option) => (
          <option key={option} value={option}>
            {ROLE_LABELS[option]}
          </option>
        ))}
      </select>
    </div>
  );
}

function fieldErrorsOf(error: unknown): Record<string, string> {
  return error instanceof ApiError ? error.fieldErrors() : {};
}

export function UsersPage() {
  useDocumentTitle('Users');
  const me = useUser();
  const users = useQuery({
    queryKey: queryKeys.users,
    queryFn: ({ signal }) => listUsers(signal),
    enabled: isAdmin(me),
  });

  if (!isAdmin(me)) {
    return (
      <div className="page">
        <h1>Users</h1>
        <p className="empty-state">Only admins can manage users.</p>
      </div>
    );
  }

  return (
    <div className="page users-page">
      <h1>Users</h1>
      <div className="users-layout">
        <section aria-labelledby="user-list-heading">
          <h2 id="user-list-heading">Accounts{users.data ? ` (${users.data.total})` : ''}</h2>
          {users.isPending ? (
            <div aria-busy="true" aria-label="Loading users">
              {[0, 1, 2].map((row) => (
                <div key={row} className="skeleton skeleton-row" />
              ))}
            </div>
          ) : users.isError ? (
            <div className="empty-state" role="alert">
              <p>The users could not be loaded. {describeError(users.error)}</p>
              <button type="button" className="button" onClick={() => void users.refetch()}>
                Try again
              </button>
            </div>
          ) : (
            <ul className="user-list">
              {users.data.lists.map((user) => (
                <UserRow key={user.username} user={user} isMe={user.username === me.username} />
              ))}
            </ul>
          )}
        </section>
        <CreateUserForm />
      </div>
    </div>
  );
}

function CreateUserForm() {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const [allowEdit, setAllowEdit] = useState<string[]>(['*']);
  const roleId = useId();

  const create = useMutation({
    mutationFn: () => createUser({ username: username.trim(), password, role, allowEdit }),
    onSuccess: (user) => {
      toast.success(`User ${user.username} was created.`);
      setUsername('');
      setPassword('');
      return queryClient.invalidateQueries({ queryKey: queryKeys.users });
    },
  });
  const errors = fieldErrorsOf(create.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate();
  }

  return (
    <section className="card" aria-labelledby="new-user-heading">
      <h2 id="new-user-heading">New user</h2>
      <form onSubmit={submit} noValidate>
        {create.isError && (
          <p className="form-error" role="alert">
            {describeError(create.error)}
          </p>
        )}
        <TextField
          label="Username"
          name="new-username"
          value={username}
          onChange={setUsername}
          required
          autoComplete="off"
          hint="Lower-case letters, digits, ., - and _; 3 to 64 characters."
          error={errors.username}
        />
        <TextField
          label="Password"
          name="new-password"
          type="password"
          value={password}
          onChange={setPassword}
          required
          autoComplete="new-password"
          hint="At least 8 characters."
          error={errors.password}
        />
        <RoleSelect id={roleId} label="Role" value={role} onChange={setRole} />
        {role === 'editor' && (
          <TagInput
            label="Allowed categories"
            values={allowEdit}
            onChange={setAllowEdit}
            hint={ALLOW_EDIT_HINT}
            error={errors.allowEdit}
          />
        )}
        <button type="submit" className="button button--primary" disabled={create.isPending}>
          Create user
        </button>
      </form>
    </section>
  );
}

function UserRow({ user, isMe }: { user: User; isMe: boolean }) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [editing, setEditing] = useState(false);
  const [role, setRole] = useState<Role>(user.role);
  const [allowEdit, setAllowEdit] = useState(user.allowEdit);
  const [password, setPassword] = useState('');
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const roleId = useId();

  const refresh = () => queryClient.invalidateQueries({ queryKey: queryKeys.users });
  const update = useMutation({
    mutationFn: () =>
      updateUser(user.username, {
        role,
        allowEdit,
        ...(password ? { password } : {}),
      }),
    onSuccess: () => {
      toast.success(
        password
          ? `${user.username} was updated and their password reset.`
          : `${user.username} was updated.`,
      );
      setPassword('');
      setEditing(false);
      return refresh();
    },
  });
  const remove = useMutation({
    mutationFn: () => deleteUser(user.username),
    onSuccess: () => {
      toast.success(`${user.username} was deleted.`);
      setConfirmingDelete(false);
      return refresh();
    },
    onError: (error) => {
      setConfirmingDelete(false);
      toast.error(`${user.username} was not deleted. ${describeError(error)}`);
    },
  });
  const unlock = useMutation({
    mutationFn: () => unlockUser(user.username),
    onSuccess: ({ wasLocked }) =>
      wasLocked
        ? toast.success(`${user.username} is unlocked and can sign in again now.`)
        : toast.success(`${user.username} was not locked out; nothing needed to change.`),
    onError: (error) => toast.error(`${user.username} was not unlocked. ${describeError(error)}`),
  });
  const errors = fieldErrorsOf(update.error);

  return (
    <li className="user-row card">
      <div className="user-summary">
        <div>
          <span className="user-name">{user.username}</span>{' '}
          {isMe && <span className="muted">(you)</span>}
          <span className="role-chip">{user.role}</span>
        </div>
        <p className="muted">
          {user.role === 'editor'
            ? `Edits: ${user.allowEdit.length ? user.allowEdit.join(', ') : 'no categories'} · `
            : ''}
          Since {formatDate(user.createdTime)}
        </p>
        <div className="button-row">
          <button
            type="button"
            className="button button--small"
            aria-expanded={editing}
            onClick={() => setEditing(!editing)}
            aria-label={`Edit ${user.username}`}
          >
            Edit
          </button>
          <button
            type="button"
            className="button button--small"
            onClick={() => unlock.mutate()}
            disabled={unlock.isPending}
            aria-label={`Unlock ${user.username}`}
            title="After too many wrong passwords a user must wait; this lets them sign in again now."
          >
            Unlock
          </button>
          <button
            type="button"
            className="button button--small button--danger"
            onClick={() => setConfirmingDelete(true)}
            aria-label={`Delete ${user.username}`}
          >
            Delete
          </button>
        </div>
      </div>
      <UserDevices username={user.username} />
      {editing && (
        <form
          className="user-editor"
          aria-label={`Edit ${user.username}`}
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            update.mutate();
          }}
        >
          {update.isError && (
            <p className="form-error" role="alert">
              {describeError(update.error)}
            </p>
          )}
          <RoleSelect
            id={roleId}
            label={`Role of ${user.username}`}
            value={role}
            onChange={setRole}
          />
          {role === 'editor' && (
            <TagInput
              label={`Allowed categories of ${user.username}`}
              values={allowEdit}
              onChange={setAllowEdit}
              hint={ALLOW_EDIT_HINT}
              error={errors.allowEdit}
            />
          )}
          <TextField
            label={`New password for ${user.username}`}
            type="password"
            value={password}
            onChange={setPassword}
            autoComplete="new-password"
            hint="Leave empty to keep the current password. Setting one signs the user out everywhere."
            error={errors.password}
          />
          <div className="button-row">
            <button type="submit" className="button button--primary" disabled={update.isPending}>
              Save {user.username}
            </button>
            <button type="button" className="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <ConfirmDialog
        open={confirmingDelete}
        title={`Delete ${user.username}?`}
        confirmLabel="Delete user"
        danger
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onCancel={() => setConfirmingDelete(false)}
      >
        <p>
          {isMe ? 'This is your own account: you will be signed out. ' : ''}
          The account and all its sessions end. Portfolios stay.
        </p>
      </ConfirmDialog>
    </li>
  );
}

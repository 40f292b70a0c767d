import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { describeError } from '../api/api-error';
import { queryKeys } from '../api/query-keys';
import {
  getShowcaseSettings,
  putShowcaseSettings,
  type ShowcaseSettingsView,
} from '../api/showcase-api';
import { TextField } from '../components/TextField';
import { useToast } from '../components/use-toast';

const TITLE_LIMIT = 120;
const INTRO_LIMIT = 2000;

/** Settings → Showcase (admins): the public pages of published work (DESIGN §15). */
export function ShowcaseSection() {
  const settings = useQuery({
    queryKey: queryKeys.showcaseSettings,
    queryFn: ({ signal }) => getShowcaseSettings(signal),
  });
  return (
    <section className="card" aria-labelledby="showcase-heading">
      <h2 id="showcase-heading">Showcase</h2>
      <p>
        A public website of the published, active portfolios: no sign-in, only their public fields
        and images. Nothing is public while it is off.
      </p>
      {settings.isPending && <p>Loading…</p>}
      {settings.isError && (
        <p className="form-error" role="alert">
          {describeError(settings.error)}
        </p>
      )}
      {settings.data && <ShowcaseForm initial={settings.data} />}
    </section>
  );
}

function readAsBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(new Error('The logo could not be read.'));
    reader.readAsDataURL(file);
  });
}

function ShowcaseForm({ initial }: { initial: ShowcaseSettingsView }) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const [enabled, setEnabled] = useState(initial.enabled);
  const [title, setTitle] = useState(initial.title);
  const [intro, setIntro] = useState(initial.intro);
  const [staffPicksFirst, setStaffPicksFirst] = useState(initial.staffPicksFirst);
  const [publicOriginals, setPublicOriginals] = useState(initial.publicOriginals);
  const [publicDocuments, setPublicDocuments] = useState(initial.publicDocuments);
  const [logo, setLogo] = useState<string | null | undefined>(undefined);
  const [titleError, setTitleError] = useState<string | undefined>();
  const save = useMutation({
    mutationFn: putShowcaseSettings,
    onSuccess: (saved) => {
      queryClient.setQueryData(queryKeys.showcaseSettings, saved);
      setLogo(undefined);
      toast.success(saved.enabled ? 'The showcase is on.' : 'The showcase is off.');
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    const error = title.trim() ? undefined : 'Enter a title for the showcase.';
    setTitleError(error);
    if (error) return;
    save.mutate({
      enabled,
      title: title.trim(),
      intro,
      staffPicksFirst,
      publicOriginals,
      publicDocuments,
      ...(logo !== undefined && { logo }),
    });
  }

  const shownLogo = logo === undefined ? initial.logo : logo;
  return (
    <form onSubmit={submit} noValidate aria-label="Showcase settings">
      <label className="switch">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        <span>Show the showcase to everyone</span>
      </label>
      {initial.enabled && (
        <p>
          It is at{' '}
          <a href={initial.url} target="_blank" rel="noreferrer">
            {initial.url}
          </a>
          .
        </p>
      )}
      <TextField
        label="Title"
        name="showcase-title"
        value={title}
        onChange={setTitle}
        required
        limit={TITLE_LIMIT}
        error={titleError}
      />
      <TextField
        label="Introduction"
        name="showcase-intro"
        value={intro}
        onChange={setIntro}
        multiline
        rows={3}
        limit={INTRO_LIMIT}
        hint="Plain text under the title on the gallery page."
      />
      <div className="field">
        <label htmlFor="showcase-logo">Logo</label>
        {shownLogo && <img className="showcase-logo-preview" src={shownLogo} alt="The logo now" />}
        <input
          id="showcase-logo"
          type="file"
          accept="image/png,image/jpeg,image/webp"
          aria-describedby="showcase-logo-hint"
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) void readAsBase64(file).then(setLogo, () => setLogo(undefined));
          }}
        />
        <p className="field-hint" id="showcase-logo-hint">
          A PNG, JPEG or WebP picture of at most 256 KB.
        </p>
        {shownLogo && (
          <button type="button" className="button button--small" onClick={() => setLogo(null)}>
            Remove the logo
          </button>
        )}
      </div>
      <label className="switch">
        <input
          type="checkbox"
          checked={staffPicksFirst}
          onChange={(e) => setStaffPicksFirst(e.target.checked)}
        />
        <span>List staff picks first</span>
      </label>
      <label className="switch">
        <input
          type="checkbox"
          checked={publicOriginals}
          onChange={(e) => setPublicOriginals(e.target.checked)}
        />
        <span>Let visitors open the original images</span>
      </label>
      <label className="switch">
        <input
          type="checkbox"
          checked={publicDocuments}
          onChange={(e) => setPublicDocuments(e.target.checked)}
        />
        <span>Let visitors download additional documents</span>
      </label>
      {save.isError && (
        <p className="form-error" role="alert">
          {describeError(save.error)}
        </p>
      )}
      <div className="button-row">
        <button type="submit" className="button" disabled={save.isPending}>
          Save showcase settings
        </button>
      </div>
    </form>
  );
}

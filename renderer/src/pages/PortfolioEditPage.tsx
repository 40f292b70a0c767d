import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import type { PortfolioDetail } from '../../../shared';
import { ApiError, describeError } from '../api/api-error';
import { getPortfolio, updatePortfolio } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';
import { UnsavedChangesGuard } from '../components/UnsavedChangesGuard';
import { useDocumentTitle } from '../components/use-document-title';
import { useToast } from '../components/use-toast';
import { paths } from '../paths';
import { ConflictDialog } from '../portfolio/ConflictDialog';
import { FileManager } from '../portfolio/FileManager';
import { PortfolioForm } from '../portfolio/PortfolioForm';
import {
  type PortfolioFormValues,
  changedFields,
  toUpdateBody,
  valuesFromDetail,
} from '../portfolio/portfolio-form-model';
import { splitServerError } from '../portfolio/server-errors';
import { usePortfolio } from '../portfolio/use-portfolio';
import { canEditCategory, editableCategories, isAdmin } from '../session/permissions';
import { useUser } from '../session/use-session';

export function PortfolioEditPage() {
  const { portfolioId = '' } = useParams();
  const portfolio = usePortfolio(portfolioId);
  const user = useUser();
  useDocumentTitle(portfolio.data ? `Edit ${portfolio.data.projectTitle}` : 'Edit portfolio');

  if (portfolio.isPending) {
    return (
      <div className="page" aria-busy="true" aria-label="Loading portfolio">
        <div className="skeleton skeleton-title" />
        <div className="skeleton detail-cover-skeleton" />
      </div>
    );
  }
  if (portfolio.isError) {
    return (
      <div className="page">
        <div className="empty-state" role="alert">
          <h1>The portfolio could not be loaded</h1>
          <p>{describeError(portfolio.error)}</p>
        </div>
      </div>
    );
  }
  if (!canEditCategory(user, portfolio.data.category)) {
    return (
      <div className="page">
        <p className="back-link">
          <Link to={paths.portfolio(portfolioId)}>← Back to the portfolio</Link>
        </p>
        <div className="empty-state">
          <h1>You cannot edit this portfolio</h1>
          <p>Your account may not edit portfolios in the category “{portfolio.data.category}”.</p>
        </div>
      </div>
    );
  }
  return <EditPortfolio detail={portfolio.data} />;
}

interface Base {
  values: PortfolioFormValues;
  revision: number;
}

function EditPortfolio({ detail }: { detail: PortfolioDetail }) {
  const user = useUser();
  const admin = isAdmin(user);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const toast = useToast();
  // `base` is what this form was loaded from: its revision makes the save conditional.
  const [base, setBase] = useState<Base>(() => ({
    values: valuesFromDetail(detail),
    revision: detail.revision,
  }));
  const [values, setValues] = useState(base.values);
  const [seenRevision, setSeenRevision] = useState(detail.revision);
  const [conflict, setConflict] = useState<PortfolioDetail | null>(null);
  const [saved, setSaved] = useState(false);

  const dirty = !saved && changedFields(values, base.values, admin).length > 0;

  if (detail.revision !== seenRevision) {
    // The portfolio changed on the server (often our own upload: files count as updates).
    // When none of this form's fields changed, move the base forward so saving does not
    // report a conflict with ourselves; an untouched form simply shows the new values.
    setSeenRevision(detail.revision);
    const fresh = valuesFromDetail(detail);
    if (!dirty) {
      setBase({ values: fresh, revision: detail.revision });
      setValues(fresh);
    } else if (changedFields(fresh, base.values, admin).length === 0) {
      setBase({ values: base.values, revision: detail.revision });
    }
  }

  const save = useMutation({
    mutationFn: (revision: number) =>
      updatePortfolio(detail.portfolioId, toUpdateBody(values, { admin, revision })),
    onSuccess: () => {
      setConflict(null);
      setSaved(true);
      toast.success('Changes saved.');
      void queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });
    },
    onError: async (error) => {
      if (error instanceof ApiError && error.code === 'REVISION_CONFLICT') {
        try {
          setConflict(
            await queryClient.fetchQuery({
              queryKey: queryKeys.portfolio(detail.portfolioId),
              queryFn: () => getPortfolio(detail.portfolioId),
              staleTime: 0,
            }),
          );
        } catch (reloadError) {
          toast.error(
            `Someone else changed this portfolio, and it could not be reloaded. ${describeError(reloadError)}`,
          );
        }
      }
    },
  });

  useEffect(() => {
    if (saved) void navigate(paths.portfolio(detail.portfolioId));
  }, [saved, navigate, detail.portfolioId]);

  const conflictError = save.error instanceof ApiError && save.error.code === 'REVISION_CONFLICT';
  const { fieldErrors, formError } =
    save.isError && !conflictError
      ? splitServerError(save.error)
      : {
          fieldErrors: {},
          formError: conflictError ? 'Not saved: someone else changed this portfolio.' : null,
        };
  const theirs = conflict ? valuesFromDetail(conflict) : null;

  return (
    <div className="page form-page">
      <p className="back-link">
        <Link to={paths.portfolio(detail.portfolioId)}>← Back to the portfolio</Link>
      </p>
      <h1>Edit “{detail.projectTitle}”</h1>
      <p className="muted">Revision {base.revision}</p>
      <PortfolioForm
        values={values}
        onChange={setValues}
        serverErrors={fieldErrors}
        formError={formError}
        showAdminFields={admin}
        categoryChoices={editableCategories(user)}
        submitLabel="Save changes"
        busy={save.isPending}
        onSubmit={() => save.mutate(base.revision)}
        onCancel={() => void navigate(paths.portfolio(detail.portfolioId))}
      />
      <FileManager detail={detail} />
      <ConflictDialog
        open={conflict !== null}
        theirChanges={theirs ? changedFields(base.values, theirs, admin) : []}
        theirs={theirs ?? values}
        mine={values}
        busy={save.isPending}
        onOverwrite={() => conflict && save.mutate(conflict.revision)}
        onReload={() => {
          if (!conflict || !theirs) return;
          setBase({ values: theirs, revision: conflict.revision });
          setValues(theirs);
          setSeenRevision(conflict.revision);
          setConflict(null);
          save.reset();
          toast.info('Reloaded the latest version.');
        }}
        onKeepEditing={() => setConflict(null)}
      />
      <UnsavedChangesGuard when={dirty} />
    </div>
  );
}

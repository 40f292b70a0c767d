import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { createPortfolio } from '../api/portfolio-api';
import { queryKeys } from '../api/query-keys';
import { UnsavedChangesGuard } from '../components/UnsavedChangesGuard';
import { useDocumentTitle } from '../components/use-document-title';
import { useToast } from '../components/use-toast';
import { paths } from '../paths';
import { PortfolioForm } from '../portfolio/PortfolioForm';
import { changedFields, emptyValues, toCreateBody } from '../portfolio/portfolio-form-model';
import { splitServerError } from '../portfolio/server-errors';
import { editableCategories, isStaff } from '../session/permissions';
import { useUser } from '../session/use-session';

export function PortfolioCreatePage() {
  useDocumentTitle('New portfolio');
  const user = useUser();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const toast = useToast();
  const categories = editableCategories(user);
  // With one category to choose from, it is chosen already.
  const [initial] = useState(() => ({
    ...emptyValues(),
    ...(categories?.length === 1 && { category: categories[0]! }),
  }));
  const [values, setValues] = useState(initial);
  const [createdId, setCreatedId] = useState<string | null>(null);

  const mutation = useMutation({
    mutationFn: () => createPortfolio(toCreateBody(values)),
    onSuccess: (created) => {
      toast.success(`“${created.projectTitle}” was created. Add a cover and files next.`);
      void queryClient.invalidateQueries({ queryKey: queryKeys.portfolios });
      setCreatedId(created.portfolioId);
    },
  });

  // Navigate only after the render that turns the unsaved-changes guard off.
  useEffect(() => {
    if (createdId) void navigate(`${paths.editPortfolio(createdId)}#files`, { replace: true });
  }, [createdId, navigate]);

  if (!isStaff(user)) {
    return (
      <div className="page">
        <h1>New portfolio</h1>
        <p className="empty-state">Your role can view portfolios but not create them.</p>
      </div>
    );
  }

  if (categories?.length === 0) {
    return (
      <div className="page">
        <h1>New portfolio</h1>
        <p className="empty-state">
          No category is open to you yet. Ask an admin to let you edit one.
        </p>
      </div>
    );
  }

  const { fieldErrors, formError } = mutation.isError
    ? splitServerError(mutation.error)
    : { fieldErrors: {}, formError: null };
  const dirty = !createdId && changedFields(values, initial).length > 0;

  return (
    <div className="page form-page">
      <p className="back-link">
        <Link to={paths.gallery()}>← Gallery</Link>
      </p>
      <h1>New portfolio</h1>
      <PortfolioForm
        values={values}
        onChange={setValues}
        serverErrors={fieldErrors}
        formError={formError}
        showAdminFields={false}
        categoryChoices={categories}
        submitLabel="Create portfolio"
        busy={mutation.isPending}
        onSubmit={() => mutation.mutate()}
        onCancel={() => void navigate(paths.gallery())}
      />
      <UnsavedChangesGuard when={dirty} />
    </div>
  );
}

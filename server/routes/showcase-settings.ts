import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  ShowcaseSettingsSchema,
  ShowcaseSettingsViewSchema,
  type ShowcaseSettingsBody,
  type ShowcaseSettingsView,
} from '../../shared';
import { errors, json } from '../openapi/responses';
import type { ShowcaseSettings } from '../showcase/showcase-settings';

function viewOf(settings: ShowcaseSettings, request: FastifyRequest): ShowcaseSettingsView {
  const { logo, ...rest } = settings;
  return {
    ...rest,
    logo: logo && `data:${logo.mimeType};base64,${logo.data}`,
    url: `${request.protocol}://${request.host}/showcase`,
  };
}

/** The public showcase's settings (DESIGN §15), admin only. */
export default async function showcaseSettingsRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSession);
  app.addHook('onRequest', app.requireRole('admin'));
  const common = { tags: ['showcase'], security: [{ session: [] }] };

  app.get(
    '/api/v1/settings/showcase',
    {
      schema: {
        ...common,
        operationId: 'getShowcaseSettings',
        summary: 'Whether the public showcase is on, and how it looks',
        response: {
          200: json(ShowcaseSettingsViewSchema, 'The settings'),
          ...errors('FORBIDDEN'),
        },
      },
    },
    async (request) => viewOf(await app.showcase.settings.get(), request),
  );

  app.put<{ Body: ShowcaseSettingsBody }>(
    '/api/v1/settings/showcase',
    {
      schema: {
        ...common,
        operationId: 'putShowcaseSettings',
        summary: 'Turn the public showcase on or off, and set its title, intro and logo',
        description:
          'Admins. Applies at once: while it is off every /showcase path is a 404. An omitted ' +
          'option or logo keeps its value.',
        body: ShowcaseSettingsSchema,
        response: {
          200: json(ShowcaseSettingsViewSchema, 'The settings now'),
          ...errors('FORBIDDEN', 'VALIDATION_FAILED'),
        },
      },
    },
    async (request) => viewOf(await app.showcase.settings.put(request.body), request),
  );
}

import { z } from 'zod';
import { NAME_MIN_LENGTH } from '../fields';

export const WORKSPACE_NAME_MAX_LENGTH = 120;

export const createWorkspaceBodySchema = z
  .strictObject({
    name: z.string().min(NAME_MIN_LENGTH).max(WORKSPACE_NAME_MAX_LENGTH),
    /** Public name in booking page URLs (/book/<slug>/<event-type-slug>); default made from the name. */
    slug: z
      .string()
      .min(1)
      .max(60)
      .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/)
      .optional(),
    /** `test` workspaces get `sk_test_` keys (decisions.md §3); default `live`. */
    mode: z.enum(['live', 'test']).optional(),
  })
  .meta({ id: 'AdminCreateWorkspaceRequest', description: 'Body of POST /admin/v1/workspaces.' });

export type CreateWorkspaceBody = z.infer<typeof createWorkspaceBodySchema>;

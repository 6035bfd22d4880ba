/** Webhook routes: the tenant's default signing secret, and a job's deliveries (list, redeliver). */
import { sendMessage } from "../queue-messages";
import { createRoute, z } from "@hono/zod-openapi";
import { encryptionKey } from "../config";
import { getJob } from "../db/jobs";
import { listDeliveries, rotateTenantSecret, tenantSecret } from "../db/webhooks";
import { isTerminal } from "../engine/types";
import { ApiError, notFound } from "../lib/errors";
import { jsonResponse, newRouter } from "../lib/router";
import { bearerSecurity, commonErrors, errorResponse } from "../schemas/common";
import { JobIdParam } from "../schemas/jobs";

const SecretSchema = z.object({ secret: z.string().openapi({ example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }) }).openapi("WebhookSecret");

const AttemptSchema = z
  .object({
    attempt: z.number().int(),
    attempted_at: z.string(),
    status_code: z.number().int().nullable(),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
    response_excerpt: z.string().nullable().openapi({ description: "At most 1 KB of the receiver's answer" }),
    next_attempt_at: z.string().nullable(),
  })
  .openapi("WebhookAttempt");

const DeliverySchema = z
  .object({
    id: z.string().openapi({ description: "Also the `webhook-id` header: stable across retries" }),
    event_type: z.string(),
    round: z.number().int().openapi({ description: "1, then one more per recover of the job (each ends with a new MAP_COMPLETED)" }),
    url: z.string(),
    status: z.enum(["pending", "delivered", "failed", "disabled"]),
    created_at: z.string(),
    next_attempt_at: z.string().nullable(),
    attempts: z.array(AttemptSchema),
  })
  .openapi("WebhookDelivery");

const tag = { tags: ["webhooks"], security: bearerSecurity };

const getSecretRoute = createRoute({
  ...tag,
  method: "get",
  path: "/webhook-secret",
  operationId: "getWebhookSecret",
  summary: "This tenant's default webhook signing secret (created on first use)",
  responses: { 200: jsonResponse(SecretSchema, "The secret"), ...commonErrors },
});

const rotateSecretRoute = createRoute({
  ...tag,
  method: "post",
  path: "/webhook-secret/rotate",
  operationId: "rotateWebhookSecret",
  summary: "Replace this tenant's default webhook secret; deliveries sign with the new one from now on",
  responses: { 200: jsonResponse(SecretSchema, "The new secret"), ...commonErrors },
});

const listRoute = createRoute({
  ...tag,
  method: "get",
  path: "/jobs/{job_id}/webhook-deliveries",
  operationId: "listWebhookDeliveries",
  summary: "Every webhook delivery of a job, with every attempt",
  request: { params: JobIdParam },
  responses: {
    200: jsonResponse(z.object({ deliveries: z.array(DeliverySchema) }), "The deliveries"),
    404: errorResponse("No such job"),
    ...commonErrors,
  },
});

const redeliverRoute = createRoute({
  ...tag,
  method: "post",
  path: "/jobs/{job_id}/webhook-deliveries/redeliver",
  operationId: "redeliverWebhook",
  summary: "Send the job's MAP_COMPLETED webhook once more, now (same webhook-id)",
  request: { params: JobIdParam },
  responses: {
    202: jsonResponse(z.object({ delivery_id: z.string() }), "Queued"),
    404: errorResponse("No such job, or the job has no webhook"),
    409: errorResponse("The job has not ended yet"),
    ...commonErrors,
  },
});

export function webhookRoutes() {
  return newRouter()
    .openapi(getSecretRoute, async (c) => c.json({ secret: await tenantSecret(c.env.DB, encryptionKey(c.env), c.get("tenantId")) }, 200))
    .openapi(rotateSecretRoute, async (c) => c.json({ secret: await rotateTenantSecret(c.env.DB, encryptionKey(c.env), c.get("tenantId")) }, 200))
    .openapi(listRoute, async (c) => {
      const job = await getJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      if (!job) throw notFound("job");
      const deliveries = (await listDeliveries(c.env.DB, job.id)).map((d) => ({
        id: d.id,
        event_type: d.event_type,
        round: d.round,
        url: d.url,
        status: d.status,
        created_at: d.created_at,
        next_attempt_at: d.next_attempt_at === null ? null : new Date(d.next_attempt_at).toISOString(),
        attempts: d.attempts,
      }));
      return c.json({ deliveries }, 200);
    })
    .openapi(redeliverRoute, async (c) => {
      const job = await getJob(c.env.DB, c.get("tenantId"), c.req.valid("param").job_id);
      if (!job) throw notFound("job");
      if (!job.webhook_url) throw new ApiError(404, "not_found", "This job has no webhook.");
      const delivery = (await listDeliveries(c.env.DB, job.id)).at(-1); // the latest round's
      if (!isTerminal(job.status) || !delivery) throw new ApiError(409, "conflict", "The job has not ended yet; there is nothing to redeliver.");
      await sendMessage(c.env, { type: "deliver_webhook", delivery_id: delivery.id, manual: true });
      return c.json({ delivery_id: delivery.id }, 202);
    });
}

/** What a job is told when it is submitted (contract v4, "Providers as they fail": model lifecycle). */
import { z } from "@hono/zod-openapi";

export const ModelWarningSchema = z
  .object({
    code: z.literal("model_retiring"),
    model: z.string(),
    shutdown_date: z.string().openapi({ description: "The day the provider stops serving the model (YYYY-MM-DD, UTC)" }),
    replacement: z.string().nullable().openapi({ description: "The model the provider recommends instead (null: none named)" }),
  })
  .openapi("ModelWarning", { description: "A model of the job shuts down within 30 days, or before the job's deadline" });

/**
 * Which credential a provider batch belongs to: a batch is polled, read and cancelled only with
 * the credential that submitted it (its key and base URL), never with whatever the tenant's
 * credential is now, nor the deployment's after the tenant's is deleted — a batch id is the
 * provider's, and another credential of the same provider may reach another tenant's batch.
 * The fingerprint is a hash: no key is stored with the batch.
 */
import { sha256Hex } from "../../lib/crypto";
import type { ProviderEndpoint } from "../types";

export async function credentialFingerprint(provider: string, endpoint: ProviderEndpoint): Promise<string> {
  return (await sha256Hex(JSON.stringify(["fanout-batch-owner", provider, endpoint.apiKey ?? "", endpoint.baseUrl ?? ""]))).slice(0, 32);
}

/** The failure of a batch's lines when the credential that submitted it is gone or changed: not retried (no other credential may read it). */
export const DISOWNED_MESSAGE =
  "The provider credential that submitted this line's batch was changed or deleted while the batch ran: its results can be read only with that credential, so the line fails without another attempt. Recover the job to run it again.";

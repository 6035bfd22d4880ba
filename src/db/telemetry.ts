/**
 * A tenant's trace collector (contract v4, "Traces (OpenTelemetry)") in D1: its OTLP/HTTP endpoint,
 * its headers sealed (they carry the collector's API keys: only their names are ever shown), whether
 * prompts and answers go in the spans, and the last export's outcome.
 */
import { seal, unseal } from "../lib/crypto";

export interface TelemetryConfig {
  endpoint: string;
  headers: Record<string, string>;
  captureContent: boolean;
}

export interface TelemetryView {
  otlp_endpoint: string;
  header_names: string[];
  capture_content: boolean;
  last_export: { at: string; status: number | null; error: string | null; spans: number } | null;
}

interface Row {
  otlp_endpoint: string;
  header_names: string;
  headers_enc: string | null;
  capture_content: number;
  last_export_at: string | null;
  last_status: number | null;
  last_error: string | null;
  last_spans: number | null;
}

const viewOf = (row: Row): TelemetryView => ({
  otlp_endpoint: row.otlp_endpoint,
  header_names: JSON.parse(row.header_names) as string[],
  capture_content: row.capture_content === 1,
  last_export: row.last_export_at ? { at: row.last_export_at, status: row.last_status, error: row.last_error, spans: row.last_spans ?? 0 } : null,
});

export async function putTelemetry(db: D1Database, key: string, tenantId: string, config: TelemetryConfig): Promise<TelemetryView> {
  const names = Object.keys(config.headers).sort();
  const sealed = names.length > 0 ? await seal(JSON.stringify(config.headers), key) : null;
  await db
    .prepare(
      `INSERT INTO telemetry (tenant_id, otlp_endpoint, header_names, headers_enc, capture_content, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET otlp_endpoint = excluded.otlp_endpoint, header_names = excluded.header_names,
         headers_enc = excluded.headers_enc, capture_content = excluded.capture_content, updated_at = excluded.updated_at,
         last_export_at = NULL, last_status = NULL, last_error = NULL, last_spans = NULL`,
    )
    .bind(tenantId, config.endpoint, JSON.stringify(names), sealed, config.captureContent ? 1 : 0, new Date().toISOString())
    .run();
  return { otlp_endpoint: config.endpoint, header_names: names, capture_content: config.captureContent, last_export: null };
}

async function row(db: D1Database, tenantId: string): Promise<Row | null> {
  return db.prepare("SELECT * FROM telemetry WHERE tenant_id = ?").bind(tenantId).first<Row>();
}

export async function telemetryView(db: D1Database, tenantId: string): Promise<TelemetryView | null> {
  const found = await row(db, tenantId);
  return found ? viewOf(found) : null;
}

/** The tenant's collector with its headers unsealed, or null when it has none. */
export async function telemetryConfig(db: D1Database, key: string, tenantId: string): Promise<TelemetryConfig | null> {
  const found = await row(db, tenantId);
  if (!found) return null;
  const headers = found.headers_enc ? (JSON.parse(await unseal(found.headers_enc, key)) as Record<string, string>) : {};
  return { endpoint: found.otlp_endpoint, headers, captureContent: found.capture_content === 1 };
}

export async function deleteTelemetry(db: D1Database, tenantId: string): Promise<boolean> {
  const result = await db.prepare("DELETE FROM telemetry WHERE tenant_id = ?").bind(tenantId).run();
  return result.meta.changes > 0;
}

/** An export's outcome (one write per exported batch); the row of a tenant that dropped its collector meanwhile is left alone. */
export async function recordExport(db: D1Database, tenantId: string, status: number | null, error: string | null, spans: number): Promise<void> {
  await db
    .prepare("UPDATE telemetry SET last_export_at = ?, last_status = ?, last_error = ?, last_spans = ? WHERE tenant_id = ?")
    .bind(new Date().toISOString(), status, error === null ? null : error.slice(0, 500), spans, tenantId)
    .run();
}

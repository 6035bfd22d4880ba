/** Every failed API call surfaces as a FanoutError carrying the API's error envelope. */
export interface FieldIssue {
  path: string;
  message: string;
}

export class FanoutError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "FanoutError";
    this.status = status;
    this.code = code;
    this.details = details;
  }

  /** Builds the error from a non-2xx response, whatever its body. */
  static async fromResponse(res: Response): Promise<FanoutError> {
    const text = await res.text().catch(() => "");
    try {
      const body = JSON.parse(text) as { error?: { code?: string; message?: string; details?: unknown } };
      if (body.error?.code) return new FanoutError(res.status, body.error.code, body.error.message ?? res.statusText, body.error.details);
    } catch {
      // not the API's envelope (a proxy, a load balancer…)
    }
    return new FanoutError(res.status, res.status >= 500 ? "internal" : "http_error", text.slice(0, 500) || res.statusText);
  }
}

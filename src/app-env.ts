/** The Hono environment shared by every route: generated bindings plus per-request variables. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    tenantId: string;
    keyId: string;
  };
}

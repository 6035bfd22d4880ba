/** Which of the floor's parts a job runs (`npm run bench:floor -- --parts`: each taken away in turn, to price it). */
export interface Parts {
  /** The call object stores its task with its outcome before the report (else a crash mid-call pays twice). */
  store: boolean;
  /** The coordinator keeps its tasks in SQLite (else in memory: a restart loses the job). */
  sql: boolean;
  /** Each call is reported by RPC and the answer is the next task (else a call object runs its share of the items and reports once). */
  report: boolean;
}

export const ALL_PARTS: Parts = { store: true, sql: true, report: true };

/**
 * The stages of an operator step (./sub-plan.ts) are its operator's, named under the step's path:
 * `<path>/<stage>`. A `/` is in no id, so no other step's stage can have such a name.
 */
export const SUB_SEPARATOR = "/";

export const subStageName = (path: string, stage: string): string => `${path}${SUB_SEPARATOR}${stage}`;

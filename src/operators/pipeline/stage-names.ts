/**
 * The stages of an operator step (./sub-plan.ts) are its operator's, named under the step's path:
 * `<path>/<stage>`. A `/` is in no id, so no other step's stage can have such a name.
 *
 * An operator another one starts over items it found (a join over its embedding blocking's pairs:
 * ../join/embedded.ts) runs under the path "": its stages keep their own names.
 */
export const SUB_SEPARATOR = "/";

export const subStageName = (path: string, stage: string): string => (path === "" ? stage : `${path}${SUB_SEPARATOR}${stage}`);

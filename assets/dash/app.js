// @ts-check
/**
 * The dashboard's entry module: the sign-in gate (a key is checked against the API before it is
 * kept), sign-out, and the page the server rendered (body[data-page]).
 */
import { api, apiKey, ApiError, signIn, signOut } from "./api.js";
import { showJobs } from "./jobs.js";
import { showJob } from "./job.js";
import { showSession } from "./session.js";
import { showNewJob } from "./new.js";

const PAGES = { jobs: showJobs, job: showJob, session: showSession, new: showNewJob };

function el(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing`);
  return found;
}

async function start() {
  const form = /** @type {HTMLFormElement} */ (el("sign-in"));
  const out = /** @type {HTMLButtonElement} */ (el("sign-out"));
  const view = el("view");
  out.addEventListener("click", () => {
    signOut();
    location.assign("/");
  });
  if (!apiKey()) {
    form.hidden = false;
    form.addEventListener("submit", (e) => void submitKey(e, form));
    /** @type {HTMLInputElement} */ (el("api-key")).focus();
    return;
  }
  out.hidden = false;
  const page = /** @type {keyof typeof PAGES} */ (document.body.dataset.page ?? "jobs");
  await PAGES[page](view, document.body.dataset.id ?? "");
}

/** @param {SubmitEvent} event @param {HTMLFormElement} form */
async function submitKey(event, form) {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ (el("api-key"));
  const error = el("sign-in-error");
  const key = input.value.trim();
  try {
    await api("GET", "/v1/jobs?limit=1", undefined, key);
    signIn(key, /** @type {HTMLInputElement} */ (el("remember-key")).checked);
    form.hidden = true;
    await start();
  } catch (err) {
    error.hidden = false;
    error.textContent =
      err instanceof ApiError && err.status === 401 ? "This API key was refused." : `Could not sign in: ${String(err instanceof Error ? err.message : err)}`;
    input.select();
  }
}

start().catch((err) => {
  const view = document.getElementById("view");
  if (view) view.textContent = `The dashboard failed to start: ${String(err instanceof Error ? err.message : err)}`;
});

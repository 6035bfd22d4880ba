"""The client, its job handles and its errors. HTTP through urllib; events through the job's
Server-Sent Events stream, resumed with Last-Event-ID when the connection drops."""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional

from .sse import read_events

DEFAULT_URL = "http://localhost:8787"
RECONNECTS = 20  # a stream that drops more often than this in a row is an error


class FanoutError(Exception):
    """An answer other than 2xx: `status`, the envelope's `code`, `message` and `details`."""

    def __init__(self, status: int, code: str, message: str, details: Any = None):
        super().__init__(f"{code} (HTTP {status}): {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details


@dataclass
class Batch:
    """Every result of a job once it has ended: as `llm_map.run_all(...)` returns them."""

    job_id: str
    successes: List[Dict[str, Any]] = field(default_factory=list)
    failures: List[Dict[str, Any]] = field(default_factory=list)
    total: int = 0
    total_attempts: int = 0


def _schema_of(output_schema: Any) -> Any:
    """A JSON Schema dict as it is, or a pydantic model class's schema."""
    if output_schema is None or isinstance(output_schema, dict):
        return output_schema
    to_schema = getattr(output_schema, "model_json_schema", None)
    if callable(to_schema):
        return to_schema()
    raise TypeError("output_schema must be a JSON Schema dict or a pydantic model class")


def _parser_of(output_schema: Any) -> Optional[Callable[[Any], Any]]:
    validate = getattr(output_schema, "model_validate", None)
    return validate if callable(validate) else None


class Fanout:
    def __init__(self, api_key: Optional[str] = None, base_url: Optional[str] = None, timeout: float = 60.0):
        self.api_key = api_key or os.environ.get("FANOUT_API_KEY")
        if not self.api_key:
            raise FanoutError(0, "unauthorized", "An API key is required (FANOUT_API_KEY).")
        self.base_url = (base_url or os.environ.get("FANOUT_URL") or DEFAULT_URL).rstrip("/")
        self.timeout = timeout

    # ── HTTP ────────────────────────────────────────────────────────────────────────────────
    def _open(self, method: str, path: str, body: Any = None, headers: Optional[Dict[str, str]] = None, timeout: Optional[float] = None):
        data = None
        all_headers = {"authorization": f"Bearer {self.api_key}", **(headers or {})}
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            all_headers.setdefault("content-type", "application/json")
        request = urllib.request.Request(f"{self.base_url}{path}", data=data, method=method, headers=all_headers)
        try:
            return urllib.request.urlopen(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as err:
            raw = err.read().decode("utf-8", "replace")
            try:
                envelope = json.loads(raw)["error"]
                raise FanoutError(err.code, envelope.get("code", "error"), envelope.get("message", raw), envelope.get("details")) from None
            except (ValueError, KeyError, TypeError):
                raise FanoutError(err.code, "error", raw or err.reason) from None

    def request(self, method: str, path: str, body: Any = None, headers: Optional[Dict[str, str]] = None) -> Any:
        with self._open(method, path, body, headers) as res:
            text = res.read().decode("utf-8")
        return json.loads(text) if text else None

    def _create(self, path: str, body: Dict[str, Any], idempotency_key: Optional[str], parse: Optional[Callable[[Any], Any]] = None) -> "Job":
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        created = self.request("POST", path, {k: v for k, v in body.items() if v is not None}, headers)
        return Job(self, created["job_id"], parse)

    # ── operators ───────────────────────────────────────────────────────────────────────────
    def map(self, inputs: List[Any], prompt_template: str, model: str, output_schema: Any = None, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        """One call per input. options: any field of POST /v1/map, e.g. execution={"mode": "batch"} (the provider's batch API, half the price) or token_budget={"usd": 5}."""
        body = {"inputs": inputs, "prompt_template": prompt_template, "model": model, "output_schema": _schema_of(output_schema), **options}
        return self._create("/v1/map", body, idempotency_key, _parser_of(output_schema))

    def agentic_map(self, inputs: List[Any], agent_prompt_template: str, model: str, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        return self._create("/v1/agentic-map", {"inputs": inputs, "agent_prompt_template": agent_prompt_template, "model": model, **options}, idempotency_key)

    def reduce(self, inputs: Any, reduction_task: Dict[str, Any], model: str, inner_task: Optional[Dict[str, Any]] = None, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        return self._create("/v1/reduce", {"inputs": inputs, "reduction_task": reduction_task, "inner_task": inner_task, "model": model, **options}, idempotency_key)

    def map_reduce(self, inputs: List[Any], mapper: Dict[str, Any], reducer: Dict[str, Any], model: str, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        return self._create("/v1/map-reduce", {"inputs": inputs, "mapper": mapper, "reducer": reducer, "model": model, **options}, idempotency_key)

    def pipeline(self, steps: List[Dict[str, Any]], model: str, inputs: Optional[Dict[str, Any]] = None, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        return self._create("/v1/pipelines", {"steps": steps, "model": model, "inputs": inputs, **options}, idempotency_key)

    def filter(self, inputs: List[Any], predicate_template: str, model: str, cascade: Optional[Dict[str, Any]] = None, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        """Keep the items that meet a condition: each result's output is {keep, reason}; output() is {kept, dropped, failed}."""
        return self._create("/v1/filter", {"inputs": inputs, "predicate_template": predicate_template, "model": model, "cascade": cascade, **options}, idempotency_key)

    def classify(self, inputs: List[Any], categories: List[Dict[str, Any]], model: str, cascade: Optional[Dict[str, Any]] = None, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        """A label per item from `categories` ([{"name", "description"}]): each output is {label, confidence}; output() is {counts, failed}."""
        return self._create("/v1/classify", {"inputs": inputs, "categories": categories, "model": model, "cascade": cascade, **options}, idempotency_key)

    def rank(self, inputs: List[Any], criteria: str, k: int, model: str, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        """The top k items by `criteria`: output() is [{index, score, wins?}] in order."""
        return self._create("/v1/rank", {"inputs": inputs, "criteria": criteria, "k": k, "model": model, **options}, idempotency_key)

    def resolve(self, inputs: List[Any], comparison_template: str, blocking: Dict[str, Any], model: str, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        """Entity resolution: output() is {clusters, resolved, failed}."""
        return self._create("/v1/resolve", {"inputs": inputs, "comparison_template": comparison_template, "blocking": blocking, "model": model, **options}, idempotency_key)

    def embed(self, inputs: List[Any], model: str, template: Optional[str] = None, dimensions: Optional[int] = None, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        """An embedding per item: each result carries `embedding` (its numbers) and `dimensions`."""
        return self._create("/v1/embed", {"inputs": inputs, "model": model, "template": template, "dimensions": dimensions, **options}, idempotency_key)

    def join(self, left: List[Any], right: List[Any], predicate_template: str, model: str, blocking: Optional[Dict[str, Any]] = None, strategy: Optional[str] = None, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        """The (left, right) pairs that meet a condition: output() is {pairs: [[left, right], ...], failed, strategy, comparisons}."""
        body = {"left": left, "right": right, "predicate_template": predicate_template, "model": model, "blocking": blocking, "strategy": strategy, **options}
        return self._create("/v1/join", body, idempotency_key)

    def evaluate(self, job_id: str, judge: Optional[Dict[str, Any]] = None, gold: Optional[List[Dict[str, Any]]] = None, compare_with: Optional[str] = None, sample: Optional[Dict[str, Any]] = None, idempotency_key: Optional[str] = None, **options: Any) -> "Job":
        """An evaluation of an ended job: `judge` ({"model", "criteria": [{"name", "description"}]}) over a seeded `sample`,
        `gold` ([{"index", "expected"}]), or A/B against `compare_with`; output() holds the rates with their Wilson intervals."""
        body = {"job_id": job_id, "judge": judge, "gold": gold, "compare": {"job_id_b": compare_with} if compare_with else None, "sample": sample, **options}
        return self._create("/v1/evaluations", body, idempotency_key)

    def dry_run(self, kind: str, body: Dict[str, Any]) -> Dict[str, Any]:
        """The estimate of a job (`kind`: map, agentic-map, reduce, map-reduce, pipelines, filter, classify, rank, resolve); nothing is created."""
        return self.request("POST", f"/v1/{kind}?dry_run=true", {k: v for k, v in body.items() if v is not None})["estimate"]

    # ── jobs ────────────────────────────────────────────────────────────────────────────────
    def job(self, job_id: str) -> "Job":
        return Job(self, job_id)

    def jobs(self, status: Optional[str] = None, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        query = "&".join(f"{k}={v}" for k, v in (("status", status), ("limit", limit)) if v is not None)
        return self.request("GET", f"/v1/jobs{'?' + query if query else ''}")["jobs"]


class Job:
    """A job: iterate it for results as they complete; `run_all()`, `output()`, `status()`, `results()`,
    `cancel()`, `recover()`, `resume()`, `delete()`."""

    def __init__(self, client: Fanout, job_id: str, parse: Optional[Callable[[Any], Any]] = None):
        self.client = client
        self.id = job_id
        self._parse = parse
        self.completed_event: Optional[Dict[str, Any]] = None

    def _parsed(self, result: Dict[str, Any]) -> Dict[str, Any]:
        if self._parse and result.get("success") and result.get("output") is not None:
            return {**result, "output": self._parse(result["output"])}
        return result

    def events(self, after: int = 0) -> Iterator[Dict[str, Any]]:
        """Every event (`{"id", "event", "data"}`) after `after`, to MAP_COMPLETED; a dropped stream is resumed after the last id seen."""
        last_id = after
        drops = 0
        while True:
            headers = {"accept": "text/event-stream"}
            if last_id:
                headers["last-event-id"] = str(last_id)
            ended = False
            try:
                with self.client._open("GET", f"/v1/jobs/{self.id}/events", headers=headers, timeout=300) as res:
                    for event in read_events(res):
                        last_id = event["id"] or last_id
                        drops = 0
                        yield event
                        if event["event"] == "MAP_COMPLETED":
                            self.completed_event = event["data"]
                            ended = True
                            break
            except (OSError, urllib.error.URLError):
                pass  # resumed below
            if ended:
                return
            drops += 1
            if drops > RECONNECTS:
                raise FanoutError(0, "stream_lost", f"the event stream of {self.id} kept dropping")
            time.sleep(min(2.0, 0.1 * drops))

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for event in self.events():
            if event["event"] in ("MAP_ITEM_COMPLETED", "TASK_COMPLETED"):
                yield self._parsed(event["data"]["result"])

    def wait(self) -> Dict[str, Any]:
        """Follows the job to its end; the MAP_COMPLETED data."""
        for _ in self.events():
            pass
        return self.completed_event or {}

    def run_all(self) -> Batch:
        """Waits for the end, then every result of the job's main stage, split by success."""
        self.wait()
        batch = self.client.request("GET", f"/v1/jobs/{self.id}/batch")
        return Batch(
            job_id=self.id,
            successes=[self._parsed(r) for r in batch["successes"]],
            failures=batch["failures"],
            total=batch["total"],
            total_attempts=batch["total_attempts"],
        )

    def output(self) -> Any:
        """A staged job's final value (a fold's accumulator, a pipeline's last step, a map-reduce synthesis)."""
        return self.wait().get("output")

    def status(self) -> Dict[str, Any]:
        return self.client.request("GET", f"/v1/jobs/{self.id}")

    def results(self, stage: Optional[str] = None, order: str = "input", kept: Optional[bool] = None, failed: Optional[bool] = None) -> List[Dict[str, Any]]:
        """Every result of a stage (the job's main stage by default); `kept`: a filter job's kept (True) or dropped (False) items only;
        `failed`: an evaluation's items the judge failed (True) or passed (False)."""
        out: List[Dict[str, Any]] = []
        cursor: Optional[str] = None
        while True:
            query = f"order={order}&limit=1000" + (f"&stage={stage}" if stage else "") + (f"&kept={'true' if kept else 'false'}" if kept is not None else "") + (f"&failed={'true' if failed else 'false'}" if failed is not None else "") + (f"&cursor={cursor}" if cursor else "")
            page = self.client.request("GET", f"/v1/jobs/{self.id}/results?{query}")
            out.extend(self._parsed(r) for r in page["results"])
            cursor = page.get("next_cursor")
            if not cursor:
                return out

    def cancel(self) -> Dict[str, Any]:
        return self.client.request("POST", f"/v1/jobs/{self.id}/cancel")

    def recover(self, **overrides: Any) -> Dict[str, Any]:
        return self.client.request("POST", f"/v1/jobs/{self.id}/recover", overrides or {})

    def resume(self, budget: Optional[int] = None, usd: Optional[float] = None) -> Dict[str, Any]:
        """A job paused by its budget goes on, with a new token total and/or dollar limit if given."""
        limits = {k: v for k, v in {"total": budget, "usd": usd}.items() if v is not None}
        return self.client.request("POST", f"/v1/jobs/{self.id}/resume", {"token_budget": limits} if limits else {})

    def delete(self) -> None:
        self.client.request("DELETE", f"/v1/jobs/{self.id}")

"""The Python client against a running Fanout (FANOUT_URL, FANOUT_API_KEY) whose `openai/…` models
are the fake model server; FAKE_TAG prefixes the fake's counters. Run by test/e2e/python-client.e2e.test.ts."""
import io
import json
import os
import sys
import unittest
import urllib.parse
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from fanout import Fanout, FanoutError  # noqa: E402
from fanout.sse import read_events  # noqa: E402

MODEL = "openai/gpt-6-luna"
ECHO = {"type": "object", "properties": {"echo": {"type": "string"}, "length": {"type": "integer"}}, "required": ["echo", "length"]}


def tag() -> str:
    return f"{os.environ.get('FAKE_TAG', 'py')}-{uuid.uuid4().hex[:8]}"


def fake(t: str, item: str, steps: str = "ok") -> str:
    return f"<<fake tag={t} id={item} steps={steps}>>"


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.fanout = Fanout()

    def test_map_iterates_results_and_run_all_splits_them(self) -> None:
        t = tag()
        job = self.fanout.map(inputs=[{"text": "a", "d": fake(t, "0")}, {"text": "b", "d": fake(t, "1", "401")}],
                              prompt_template="Say {{ item.text }} {{ item.d }}", model=MODEL, output_schema=ECHO, max_retries=0)
        seen = sorted((r["index"], r["success"]) for r in job)
        self.assertEqual(seen, [(0, True), (1, False)])
        batch = job.run_all()
        self.assertEqual((batch.total, len(batch.successes), len(batch.failures)), (2, 1, 1))
        self.assertEqual(batch.successes[0]["output"]["echo"], "Say a")
        self.assertEqual(batch.failures[0]["error_kind"], "llm_error")
        self.assertEqual(job.status()["status"], "completed")

    def test_pydantic_models_as_output_schema(self) -> None:
        try:
            from pydantic import BaseModel
        except ImportError:
            self.skipTest("pydantic is not installed")

        class Echo(BaseModel):
            echo: str
            length: int

        t = tag()
        batch = self.fanout.map(inputs=["x"], prompt_template="Echo {{ item }} " + fake(t, "0"), model=MODEL, output_schema=Echo).run_all()
        self.assertIsInstance(batch.successes[0]["output"], Echo)
        self.assertEqual(batch.successes[0]["output"].echo, "Echo x")

    def test_events_resume_after_an_id_without_repeats(self) -> None:
        t = tag()
        job = self.fanout.map(inputs=[fake(t, str(i)) for i in range(3)], prompt_template="{{ item }}", model=MODEL, output_schema=ECHO)
        every = list(job.events())
        later = list(job.events(after=every[1]["id"]))
        self.assertEqual([e["id"] for e in later], [e["id"] for e in every[2:]])
        self.assertEqual(every[-1]["event"], "MAP_COMPLETED")

    def test_the_v2_operators(self) -> None:
        t = tag()
        agent = self.fanout.agentic_map(inputs=[fake(t, "a", "text:done")], agent_prompt_template="{{ item }}", model=MODEL).run_all()
        self.assertEqual(agent.successes[0]["output_text"], "done")
        fold = self.fanout.reduce(inputs=["a", "b"], initial_value="", model=MODEL,
                                  reduction_task={"prompt_template": "{{ accumulator.echo if accumulator else '' }}+{{ current_result }} " + fake(t, "r{{ index }}"), "output_schema": ECHO})
        self.assertEqual(fold.output()["echo"], "+a+b")
        corpus = self.fanout.map_reduce(inputs=["one", "two"], model=MODEL, docs_per_mapper=1,
                                        mapper={"prompt_template": "{{ item }} " + fake(t, "m{{ item }}", 'json:%5B%7B%22claim%22%3A%22c%22%7D%5D')},
                                        reducer={"prompt_template": "{{ items | length }} claims " + fake(t, "red"), "output_schema": ECHO})
        self.assertEqual(corpus.output()["echo"], "1 claims")
        pipe = self.fanout.pipeline(model=MODEL, inputs={"topic": "owls"}, steps=[
            {"id": "first", "type": "llm", "prompt_template": "{{ topic }} " + fake(t, "p1"), "output_schema": ECHO},
            {"id": "second", "type": "llm", "prompt_template": "about {{ first.echo }} " + fake(t, "p2"), "output_schema": ECHO},
        ])
        self.assertEqual(pipe.output()["echo"], "about owls")
        self.assertEqual([s["step"] for s in pipe.results(stage="steps")], ["first", "second"])
        estimate = self.fanout.dry_run("map", {"inputs": ["a", "b"], "prompt_template": "{{ item }}", "model": MODEL})
        self.assertEqual(estimate["calls"], 2)

    def test_the_semantic_operators(self) -> None:
        t = tag()
        drop = "json:" + urllib.parse.quote(json.dumps({"keep": False}))
        kept = self.fanout.filter(inputs=[fake(t, "f0"), fake(t, "f1", drop)], predicate_template="Keep {{ item }}?", model=MODEL)
        self.assertEqual(kept.output(), {"kept": [0], "dropped": 1, "failed": 0})
        self.assertEqual([r["index"] for r in kept.results(kept=False)], [1])
        labels = self.fanout.classify(inputs=[fake(t, "c0")], categories=[{"name": "a"}, {"name": "b"}], model=MODEL,
                                      cascade={"model": MODEL, "accept_above": 0.9})
        self.assertEqual(labels.output(), {"counts": {"a": 1, "b": 0}, "failed": 0, "decided_by": {"cascade": 1, "model": 0}})
        top = self.fanout.rank(inputs=[fake(t, "r0", "json:%7B%22score%22%3A3%7D"), fake(t, "r1", "json:%7B%22score%22%3A7%7D")], criteria="best", k=1, model=MODEL)
        self.assertEqual(top.output(), [{"index": 1, "score": 7}])
        same = self.fanout.resolve(inputs=[{"n": "a"}, {"n": "a"}, {"n": "b"}], comparison_template="{{ item_a.n }} {{ item_b.n }} " + fake(t, "cmp"),
                                   blocking={"keys": ["n"]}, model=MODEL)
        self.assertEqual(same.output(), {"clusters": [[0, 1], [2]], "resolved": None, "failed": 0})

    def test_evaluate(self) -> None:
        t = tag()
        judged = lambda ok: "gpt-6-sol~json:" + urllib.parse.quote(json.dumps({"verdicts": {"sound": {"pass": ok, "reason": "r"}}}))
        source = self.fanout.filter(inputs=[fake(t, f"e{i}", f"{MODEL.split('/')[1]}~ok,{judged(i != 1)}") for i in range(3)], predicate_template="Keep {{ item }}?", model=MODEL)
        source.wait()
        evaluation = self.fanout.evaluate(source.id, judge={"model": "openai/gpt-6-sol", "criteria": [{"name": "sound", "description": "It follows"}]},
                                          gold=[{"index": 0, "expected": True}], sample={"size": 3, "seed": 1})
        out = evaluation.output()
        self.assertEqual(out["criteria"]["sound"]["passed"], 2)
        self.assertEqual(out["gold"]["n"], 1)
        self.assertEqual([r["index"] for r in evaluation.results(failed=True)], [1])

    def test_batch_mode_and_cost(self) -> None:
        t = tag()
        job = self.fanout.map(inputs=[fake(t, str(i)) for i in range(2)], prompt_template="{{ item }}", model=MODEL, output_schema=ECHO,
                              execution={"mode": "batch"}, token_budget={"usd": 1})
        batch = job.run_all()
        self.assertEqual(len(batch.successes), 2)
        self.assertTrue(all(r["cost_usd"] > 0 for r in batch.successes))
        status = job.status()
        self.assertEqual(status["execution"]["mode"], "batch")
        self.assertEqual([b["status"] for b in status["batches"]], ["ended"])
        self.assertAlmostEqual(status["budget"]["usd"]["spent"], status["cost_usd"], places=7)
        with self.assertRaises(FanoutError) as refused:
            self.fanout.map(inputs=["x"], prompt_template="{{ item }}", model="openai-compatible/m", execution={"mode": "batch"})
        self.assertEqual(refused.exception.code, "unsupported_execution_mode")

    def test_typed_errors_and_delete(self) -> None:
        with self.assertRaises(FanoutError) as bad:
            self.fanout.map(inputs=["a"], prompt_template="no item here", model=MODEL)
        self.assertEqual((bad.exception.status, bad.exception.code), (400, "template_missing_item"))
        self.assertEqual(bad.exception.details[0]["path"], "prompt_template")
        with self.assertRaises(FanoutError) as missing:
            self.fanout.job("job_nope").status()
        self.assertEqual(missing.exception.code, "not_found")
        job = self.fanout.map(inputs=["a"], prompt_template="{{ item }} " + fake(tag(), "0"), model=MODEL)
        job.wait()
        job.delete()
        with self.assertRaises(FanoutError) as gone:
            job.status()
        self.assertEqual(gone.exception.status, 404)

    def test_sse_parser(self) -> None:
        stream = io.BytesIO(b": keepalive\n\nid: 1\nevent: MAP_STARTED\ndata: {\"a\": 1}\n\nid: 2\nevent: X\ndata: line1\ndata: line2\n\n")
        self.assertEqual(list(read_events(stream)), [{"id": 1, "event": "MAP_STARTED", "data": {"a": 1}}, {"id": 2, "event": "X", "data": "line1\nline2"}])


if __name__ == "__main__":
    unittest.main()

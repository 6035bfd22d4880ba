"""Fanout's Python client: the standard library only (pydantic is used when installed).

    from fanout import Fanout
    fanout = Fanout(api_key="fo_…", base_url="http://localhost:8787")
    job = fanout.map(inputs=docs, prompt_template="Summarise: {{ item }}", model="openai/gpt-6-luna",
                     output_schema=MyModel)   # a JSON Schema dict, or a pydantic model class
    for result in job:                          # results as they complete, over the job's event stream
        print(result["index"], result["output"])
    batch = job.run_all()                       # or everything at once: batch.successes / batch.failures

The same for `agentic_map`, `reduce`, `map_reduce`, `pipeline`, `filter`, `classify`, `rank` and `resolve`; options are the API's own
fields (snake_case), passed as keyword arguments.
"""
from .client import Batch, Fanout, FanoutError, Job

__all__ = ["Batch", "Fanout", "FanoutError", "Job"]

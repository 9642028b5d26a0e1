"""The evolver: LLM-driven evolution of bot programs (docs/evolver.md).

The worker's shell sits at the top (`worker`, `tasks`, `handler`, `commands`, `metrics`), with the
contract between the engine and the models (`contract`). The rest is a package per domain: `engine`
(the loop and the root's tools), `llm` (model calls, their prompts, their spend), `search` (the
program database's rules, program text, the built-in operator), `evaluation` (the matches that
score a program), `store` (the rows) and `seeds`."""

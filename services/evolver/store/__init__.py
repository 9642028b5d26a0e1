"""The evolver worker's database side.

Everything an engine step produces (an LLM call, a program, an evaluation, an event, a generation)
is written at once, in its own short transaction, under a key derived from the step: a step run
again after a crash finds what it wrote and reuses it. So a resumed run never pays for an LLM call
twice, never stores a program twice and never evaluates one twice, whatever chunk it died in.
"""

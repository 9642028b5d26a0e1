"""The evolution loop (`loop.Engine`) and the root's tools (`toolbox.Toolbox`, over the programs made,
how they are judged, the run's books and what the root reads), with the sandboxed `python` tool
(`analysis`)."""

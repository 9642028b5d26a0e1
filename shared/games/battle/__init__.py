"""`battle`: a deterministic pymunk team shooter with field of view, occlusion, signals and memory."""

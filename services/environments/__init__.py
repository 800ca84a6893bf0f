"""Task environments, shared by the planner and the executor: what each sandbox kind
enforces and where a verifier may run (capabilities.py), the Docker engine connection
(engine.py) and task images (images.py). The executor's sandboxes only run things."""

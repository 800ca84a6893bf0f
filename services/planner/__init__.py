"""The planner service: resolve what a run asks for, then have the store record it."""

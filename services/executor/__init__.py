"""The executor service: works the store's queue, one sandboxed attempt at a time per slot."""

"""The composition roots: one module per deployment shape, the only modules that build
servers of more than one service and wire them together.

- embedded.py: every service in this process on loopback (each `hemra` command, the tests);
- service.py: `hemra serve`, the embedded services with the store open to remote workers,
  the HTTP API and viewer, and an executor working the queue;
- worker.py: `hemra worker`, an executor and its own scorer on this machine working a shared
  store's queue.

One service alone (`hemra service NAME`, `python -m hemra.services.NAME`) is wired by that
service's own __main__. The CLI parses options, says what happens and handles signals; it
builds no server itself.
"""

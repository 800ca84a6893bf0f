"""HEMRA's domain: what every service shares and no service owns. The vocabulary and the one
reward -> verdict rule, the record types, IDs, and the formats (exports, Harbor's results, task
and harness files, folder trees). It imports no service; every service may import it
(tests/test_import_direction.py)."""

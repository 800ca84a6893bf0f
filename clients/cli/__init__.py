"""The `hemra` command."""

import os

# gRPC's core reads its log level once, when it loads: its own info lines (a TLS handshake
# that failed, a connection the server closed) are not the command's output, whose errors are
# one line each. HEMRA_DEBUG keeps them.
if not os.environ.get("HEMRA_DEBUG"):
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

"""Clients of HEMRA's services: the `hemra` CLI and the gRPC client library it and the services use."""

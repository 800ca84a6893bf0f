"""The store service: the database, the blob store and the durable job queue."""

"""attempt usage summed as events are written

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

from hemra.services.store import usage

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

#: Usage events read per batch while the sums of a store's existing events are made.
BATCH = 10_000


def upgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("input_tokens", sa.BigInteger(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("output_tokens", sa.BigInteger(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("cost_usd", sa.Float(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("usage_events", sa.Integer(), server_default="0", nullable=False))
    _sum_existing_events()
    # Read through the index no more: the sums are on the attempts.
    op.drop_index("ix_events_usage", table_name="events")


def _sum_existing_events() -> None:
    """Sum what every attempt's usage events already say, with the rule new events are summed by
    (services/store/usage.py), reading them through 0010's partial index a batch at a time."""
    conn = op.get_bind()
    events = sa.table("events", sa.column("attempt_id"), sa.column("seq"), sa.column("type"), sa.column("payload"))
    attempts = sa.table("attempts", *(sa.column(name) for name in ("id", *usage.COLUMNS)))
    totals: dict[str, usage.Usage] = {}
    after = ("", 0)
    while True:
        rows = conn.execute(
            sa.select(events.c.attempt_id, events.c.seq, events.c.payload)
            .where(events.c.type == "usage", sa.tuple_(events.c.attempt_id, events.c.seq) > sa.tuple_(*after))
            .order_by(events.c.attempt_id, events.c.seq)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        for attempt_id, _, payload in rows:
            totals.setdefault(attempt_id, usage.Usage()).add(usage.of_events([{"type": "usage", "payload": payload}]))
        after = (rows[-1].attempt_id, rows[-1].seq)
    if totals:
        conn.execute(
            attempts.update()
            .where(attempts.c.id == sa.bindparam("attempt"))
            .values({name: sa.bindparam(name) for name in usage.COLUMNS}),
            [dict(attempt=attempt_id, **total.values()) for attempt_id, total in totals.items()],
        )


def downgrade() -> None:
    usage_only = sa.text("type = 'usage'")
    op.create_index("ix_events_usage", "events", ["attempt_id"], sqlite_where=usage_only, postgresql_where=usage_only)
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        for name in reversed(usage.COLUMNS):
            batch_op.drop_column(name)

"""attempt mining_events: events that mine the repository's history, counted as events are written

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

from hemra.services.store import usage

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

#: Tool-call events read per batch while a store's existing events are counted.
BATCH = 10_000


def upgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("mining_events", sa.Integer(), server_default="0", nullable=False))
    _count_existing_events()
    # Kept settled cells hold their attempts without the count: read them from the attempts again.
    op.execute("DELETE FROM settled_cells")


def _count_existing_events() -> None:
    """Count the history-mining tool calls every attempt already holds, with the rule new events
    are counted by (services/store/usage.py, services/common/mining.py), a batch at a time."""
    conn = op.get_bind()
    events = sa.table(
        "events", sa.column("attempt_id"), sa.column("seq"), sa.column("type"), sa.column("name"), sa.column("payload")
    )
    attempts = sa.table("attempts", sa.column("id"), sa.column("mining_events"))
    counts: dict[str, int] = {}
    after = ("", 0)
    while True:
        rows = conn.execute(
            sa.select(events.c.attempt_id, events.c.seq, events.c.name, events.c.payload)
            .where(events.c.type == "tool_call", sa.tuple_(events.c.attempt_id, events.c.seq) > sa.tuple_(*after))
            .order_by(events.c.attempt_id, events.c.seq)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        for attempt_id, _, name, payload in rows:
            if usage.mines({"type": "tool_call", "name": name, "payload": payload}):
                counts[attempt_id] = counts.get(attempt_id, 0) + 1
        after = (rows[-1].attempt_id, rows[-1].seq)
    if counts:
        conn.execute(
            attempts.update().where(attempts.c.id == sa.bindparam("attempt")).values(mining_events=sa.bindparam("n")),
            [dict(attempt=attempt_id, n=n) for attempt_id, n in counts.items()],
        )


def downgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_column("mining_events")

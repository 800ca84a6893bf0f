"""events usage index

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

USAGE = sa.text("type = 'usage'")


def upgrade() -> None:
    op.create_index("ix_events_usage", "events", ["attempt_id"], sqlite_where=USAGE, postgresql_where=USAGE)


def downgrade() -> None:
    op.drop_index("ix_events_usage", table_name="events")

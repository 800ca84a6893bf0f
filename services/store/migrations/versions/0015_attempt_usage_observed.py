"""attempt usage observed by HEMRA's model relay, summed apart from the reported usage

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

#: Written out, not read from services/store/usage.py: a migration stays what it was.
COLUMNS = (
    ("usage_observed_input_tokens", sa.BigInteger()),
    ("usage_observed_output_tokens", sa.BigInteger()),
    ("usage_observed_cache_read_input_tokens", sa.BigInteger()),
    ("usage_observed_cache_creation_input_tokens", sa.BigInteger()),
    ("usage_observed_model_calls", sa.BigInteger()),
    ("usage_observed_unreadable", sa.BigInteger()),
    ("usage_observed_events", sa.Integer()),
)


def upgrade() -> None:
    # No events to sum: the `usage_observed` type is new, and only HEMRA writes it.
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        for name, kind in COLUMNS:
            batch_op.add_column(sa.Column(name, kind, server_default="0", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        for name, _ in reversed(COLUMNS):
            batch_op.drop_column(name)

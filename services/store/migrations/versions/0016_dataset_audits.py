"""dataset audits, and the audit recorded with each cell of a run

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dataset_audits",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("dataset_digest", sa.String(length=80), nullable=False),
        sa.Column("dataset_name", sa.String(length=300), nullable=False),
        sa.Column("audit_time", sa.Float(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("tasks", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_digest"], ["datasets.digest"], name=op.f("fk_dataset_audits_dataset_digest_datasets")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dataset_audits")),
    )
    op.create_index(op.f("ix_dataset_audits_dataset_digest"), "dataset_audits", ["dataset_digest"], unique=False)
    # Runs recorded before audits were keep no audit (NULL): their reports are not flagged.
    with op.batch_alter_table("cells", schema=None) as batch_op:
        batch_op.add_column(sa.Column("dataset_audit", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("cells", schema=None) as batch_op:
        batch_op.drop_column("dataset_audit")
    op.drop_index(op.f("ix_dataset_audits_dataset_digest"), table_name="dataset_audits")
    op.drop_table("dataset_audits")

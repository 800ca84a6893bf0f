"""run_repairs: resumes and repairs of runs (who, when, why, what they queued again)

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_repairs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("requested_by", sa.String(length=300), nullable=False),
        sa.Column("create_time", sa.Float(), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("queued", sa.Integer(), nullable=False),
        sa.Column("allowed_changes", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_run_repairs_run_id_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_repairs")),
    )
    op.create_index(op.f("ix_run_repairs_run_id"), "run_repairs", ["run_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_run_repairs_run_id"), table_name="run_repairs")
    op.drop_table("run_repairs")

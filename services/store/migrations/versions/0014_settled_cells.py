"""settled cells

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "settled_cells",
        sa.Column("cell_id", sa.String(length=32), nullable=False),
        sa.Column("judge_version", sa.Integer(), nullable=False),
        sa.Column("trials", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["cell_id"], ["cells.id"], name=op.f("fk_settled_cells_cell_id_cells")),
        sa.PrimaryKeyConstraint("cell_id", name=op.f("pk_settled_cells")),
    )


def downgrade() -> None:
    op.drop_table("settled_cells")
